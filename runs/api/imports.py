"""Imports of old sysbench logs: stored as a batch, like the import page."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import parsers, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.models import (
    Status,
    Target,
)
from runs.services import importer


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
    """What `manage.py import_log --json` prints."""

    dry_run = serializers.BooleanField()
    batch_id = serializers.IntegerField(allow_null=True)
    run_id = serializers.IntegerField(allow_null=True)
    test = serializers.CharField()
    status = serializers.ChoiceField(choices=Status.choices)
    error = serializers.CharField(allow_blank=True)
    params = serializers.DictField()
    summary = serializers.DictField()
    samples = serializers.ListField(child=serializers.DictField())
    reports = serializers.ListField(child=serializers.DictField())
    histogram = serializers.ListField(child=serializers.ListField())
    warnings = serializers.ListField(child=serializers.CharField())
    errors = serializers.ListField(child=serializers.DictField())  # type: ignore[assignment]
    unrecognised_lines = serializers.IntegerField()


class LogImport(APIView):
    """Store a sysbench log run elsewhere as an imported batch, as `manage.py import_log`."""

    parser_classes = [parsers.MultiPartParser]

    @extend_schema(
        operation_id="imports_create",
        request=ImportSerializer,
        responses={201: ImportResultSerializer, 200: ImportResultSerializer},
    )
    def post(self, request: Request) -> Response:
        given = ImportSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        values = given.validated_data
        imported = importer.log_import(
            text=values["log"].read().decode("utf-8", errors="replace"),
            target=values.get("target"),
            test=values.get("test"),
            label=values["label"],
            user=request.user,
            dry_run=values["dry_run"],
        )
        code = status.HTTP_200_OK if imported.dry_run else status.HTTP_201_CREATED
        return Response(imported.to_dict(), status=code)
