"""The runs of a batch: a run, its samples (JSON or CSV, polled with ?after=) and its
sysbench log."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, renderers, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.api.common import QueryParameters
from runs.http.responses import streamed
from runs.models import FINISHED_STATUSES, SAMPLE_FIGURES, Run, Sample, Status
from runs.services import run_selectors
from runs.services.answers import exports


class RunSerializer(serializers.ModelSerializer[Run]):
    duration_s = serializers.FloatField(read_only=True, allow_null=True)

    class Meta:
        model = Run
        fields = [
            "id",
            "batch",
            "position",
            "round",
            "label",
            "cell_key",
            "threads",
            "settings",
            "options",
            "status",
            "verified_settings",
            "summary",
            "counters",
            "outcome",
            "exit_code",
            "error_kind",
            "error",
            "error_hint",
            "expected_duration_s",
            "started_at",
            "finished_at",
            "duration_s",
            "host_summary",
            "bottleneck",
            "warnings",
        ]
        read_only_fields = fields


class RunDetailSerializer(RunSerializer):
    environment = serializers.SerializerMethodField(
        help_text="Where the run ran: its batch's environment, with the server variables as "
        "they were once this run's settings were applied. A variable that holds a credential "
        "(report_password, primary_conninfo) keeps its name, its value shown as ********."
    )
    changed_variables = serializers.SerializerMethodField(
        help_text="The server variables this run saw differ from its batch's snapshot."
    )
    tpcc = serializers.SerializerMethodField(
        help_text="A TPC-C run's figures (null for another run): script, tpmc (NewOrder per "
        "minute; null where the script prints no NewOrders, no_tpmc_reason says why), tps, "
        "errors_per_s (ignored errors: deadlocks...), warehouses, table_sets, "
        "total_warehouses, mix ([{name, per_s, share}] where printed); means after warmup."
    )

    class Meta(RunSerializer.Meta):
        fields = [
            *RunSerializer.Meta.fields,
            "environment",
            "changed_variables",
            "tpcc",
            "argv",
            "reports",
            "histogram",
        ]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_environment(self, run: Run) -> dict[str, Any]:
        return run_selectors.run_environment(run)

    @extend_schema_field({"type": "object", "additionalProperties": {"type": "string"}})
    def get_changed_variables(self, run: Run) -> dict[str, str]:
        return run_selectors.run_changed_variables(run)

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": {}})
    def get_tpcc(self, run: Run) -> dict[str, Any] | None:
        figures = run_selectors.run_tpcc(run)  # no query for a run that is not TPC-C
        return figures.to_json() if figures is not None else None


class SampleSerializer(serializers.ModelSerializer[Sample]):
    class Meta:
        model = Sample
        fields = [*SAMPLE_FIGURES, "received_at"]
        read_only_fields = fields


MAX_JSON_SAMPLES = 5000
MAX_CSV_SAMPLES = 1_000_000  # a CSV answer streams: a whole ten-hour run in one call


class SamplesQuerySerializer(QueryParameters):
    after = serializers.IntegerField(
        min_value=0, default=0, help_text="Only samples with a greater seq."
    )
    limit = serializers.IntegerField(
        min_value=1,
        max_value=MAX_CSV_SAMPLES,
        default=1000,
        help_text=f"A JSON page holds at most {MAX_JSON_SAMPLES} (ask for the rest with "
        "?after= its last_seq); a CSV answer streams up to "
        f"{MAX_CSV_SAMPLES:,}.",
    )


class SamplePageSerializer(serializers.Serializer[Any]):
    run = serializers.IntegerField()
    run_status = serializers.ChoiceField(choices=Status.choices)
    finished = serializers.BooleanField(
        help_text="The run ended and every one of its samples was returned: stop polling."
    )
    last_seq = serializers.IntegerField(help_text="Pass it as `after` in the next call.")
    next = serializers.URLField(allow_null=True, help_text="More samples are stored already.")
    results = SampleSerializer(many=True)


class RunDetail(generics.RetrieveAPIView[Run]):
    """A run: summary, verified settings, counters, error and hint, the batch's environment."""

    queryset = Run.objects.select_related("batch").defer("raw_log")
    serializer_class = RunDetailSerializer


class SamplesCSVRenderer(renderers.BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, dict) and "results" in data:
            rows, columns = data["results"], list(SampleSerializer.Meta.fields)
        else:  # an error: {"field": ..., "message": ...}
            rows, columns = [data], list(data)
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue().encode()


class RunSamples(APIView):
    """The run's interval samples with seq > after, in order: poll with the last seq seen
    until `finished`. JSON, or CSV with ?format=csv or Accept: text/csv (then the run's
    status and the last seq come in the X-Run-Status and X-Last-Seq headers)."""

    renderer_classes = [renderers.JSONRenderer, renderers.BrowsableAPIRenderer, SamplesCSVRenderer]

    @extend_schema(
        parameters=[
            SamplesQuerySerializer,
            OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], required=False),
        ],
        responses={
            (200, "application/json"): SamplePageSerializer,
            (200, "text/csv"): OpenApiTypes.STR,
        },
    )
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        query = SamplesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        after, limit = query.validated_data["after"], query.validated_data["limit"]
        as_csv = request.accepted_renderer.format == SamplesCSVRenderer.format
        if not as_csv:
            limit = min(limit, MAX_JSON_SAMPLES)  # a page; the next one starts at its last_seq
        # The status is read first: a run that had ended by then has stored every sample.
        run = get_object_or_404(Run.objects.only("id", "status"), pk=pk)
        if as_csv:
            return _samples_csv(request, run, after=after, limit=limit)
        samples = run_selectors.samples_after(run, after=after, limit=limit)
        last_seq = samples[-1].seq if samples else after
        more = len(samples) == limit
        page = {
            "run": run.pk,
            "run_status": run.status,
            "finished": run.status in FINISHED_STATUSES and not more,
            "last_seq": last_seq,
            "next": _with_after(request, last_seq) if more else None,
            "results": samples,
        }
        headers = {"X-Run-Status": run.status, "X-Last-Seq": str(last_seq)}
        return Response(SamplePageSerializer(page).data, headers=headers)


def _samples_csv(request: Request, run: Run, *, after: int, limit: int) -> HttpResponseBase:
    """Streamed as it is read; the last seq is known before the first row is sent."""
    last_seq = run_selectors.last_seq_within(run, after=after, limit=limit)
    headers = {"X-Run-Status": run.status, "X-Last-Seq": str(last_seq)}
    rows = exports.run_samples_csv(run, after=after, limit=limit)
    return streamed(request._request, rows, content_type="text/csv; charset=utf-8", headers=headers)


def _with_after(request: Request, after: int) -> str:
    params = request.query_params.copy()
    params["after"] = str(after)
    return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")


class RunLog(APIView):
    """The run's raw log: everything sysbench printed, as it printed it (a running run's
    lines so far, as stored on each heartbeat)."""

    @extend_schema(responses={(200, "text/plain"): OpenApiTypes.STR})
    def get(self, request: Request, pk: int) -> HttpResponse:
        run = get_object_or_404(Run.objects.only("id", "raw_log"), pk=pk)
        response = HttpResponse(run.raw_log, content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'inline; filename="run-{run.pk}.log"'
        return response
