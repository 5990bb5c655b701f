"""Imports of old sysbench logs: stored as a batch, like the import page."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, parsers, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.errors import InvalidInput
from runs.http.uploads import LogTooLarge
from runs.models import (
    Status,
    Target,
)
from runs.services.imports import importer


class ImportSerializer(serializers.Serializer[Any]):
    log = serializers.FileField(help_text="A sysbench log (0.4, 0.5 or 1.0 output).")
    target = serializers.PrimaryKeyRelatedField(
        queryset=Target.objects.all(), required=False, allow_null=True
    )
    test = serializers.CharField(
        max_length=64, required=False, allow_null=True, help_text="When the log does not say."
    )
    # Declared fields leave the class attributes (DRF's metaclass): no clash with Field.label.
    label = serializers.CharField(  # type: ignore[assignment]
        max_length=200, required=False, default="", allow_blank=True
    )
    dry_run = serializers.BooleanField(default=False, help_text="Parse only; save nothing.")


class ImportResultSerializer(serializers.Serializer[Any]):
    """What `manage.py import_log --json` prints, and where the run is: a log may hold a
    million samples, so they are not in the answer; read them at `samples_url`."""

    dry_run = serializers.BooleanField()
    batch_id = serializers.IntegerField(allow_null=True)
    run_id = serializers.IntegerField(allow_null=True)
    results_url = serializers.URLField(allow_null=True, help_text="The batch's results page.")
    samples_url = serializers.URLField(allow_null=True, help_text="The run's samples (JSON, CSV).")
    test = serializers.CharField()
    status = serializers.ChoiceField(choices=Status.choices)
    outcome = serializers.ChoiceField(
        choices=["ok", "forced_shutdown", "error"],
        help_text="sysbench's outcome: a forced shutdown (--forced-shutdown at --time) is a "
        "valid result with unfinished transactions, stored as a done run.",
    )
    outcome_text = serializers.CharField(
        help_text='e.g. "forced shutdown, 2 transactions unfinished"'
    )
    error = serializers.CharField(allow_blank=True)
    params = serializers.DictField()
    summary = serializers.DictField()
    sample_count = serializers.IntegerField()
    first_samples = serializers.ListField(
        child=serializers.DictField(), help_text="The first 30 samples."
    )
    reports = serializers.ListField(child=serializers.DictField())
    histogram = serializers.ListField(child=serializers.ListField())
    warnings = serializers.ListField(child=serializers.CharField())
    errors = serializers.ListField(child=serializers.DictField())  # type: ignore[assignment]
    unrecognised_lines = serializers.IntegerField()


class LogTooLargeError(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "the log is too large"


class LogImport(APIView):
    """Store a sysbench log run elsewhere as an imported batch, as `manage.py import_log`."""

    parser_classes = [parsers.MultiPartParser]

    @extend_schema(
        operation_id="imports_create",
        request=ImportSerializer,
        responses={201: ImportResultSerializer, 200: ImportResultSerializer},
    )
    def post(self, request: Request) -> Response:
        given = ImportSerializer(data=_data(request))
        given.is_valid(raise_exception=True)
        values = given.validated_data
        try:
            imported = importer.log_import(
                log=values["log"],
                target=values.get("target"),
                test=values.get("test"),
                label=values["label"],
                user=request.user,
                dry_run=values["dry_run"],
            )
        except InvalidInput as e:  # the log's faults are the `log` field's here
            raise InvalidInput("log" if e.field == "file" else e.field, e.message) from None
        code = status.HTTP_200_OK if imported.dry_run else status.HTTP_201_CREATED
        return Response({**imported.to_dict(), **_links(request, imported)}, status=code)


def _data(request: Request) -> Any:
    try:
        return request.data
    except exceptions.ParseError as e:
        if isinstance(e.__context__, LogTooLarge):  # refused by the upload handler
            raise LogTooLargeError({"log": [str(e.__context__)]}) from None
        raise


def _links(request: Request, imported: importer.ImportResult) -> dict[str, str | None]:
    batch, run = imported.batch, imported.run
    return {
        "results_url": request.build_absolute_uri(reverse("batch_results", args=[batch.pk]))
        if batch
        else None,
        "samples_url": request.build_absolute_uri(reverse("api-run-samples", args=[run.pk]))
        if run
        else None,
    }
