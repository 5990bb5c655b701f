"""Batches, their runs, and the samples of a run (JSON or CSV, polled with ?after=)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet
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
from runs.api.nightly.history import AnalysisSerializer
from runs.http.responses import streamed
from runs.models import (
    FINISHED_STATUSES,
    SAMPLE_FIGURES,
    Batch,
    LaunchedBy,
    Run,
    Sample,
    Status,
)
from runs.services import batches, permissions, run_selectors, selectors
from runs.services.answers import exports


class BatchSerializer(serializers.ModelSerializer[Batch]):
    launched_by_user: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    runs_total = serializers.IntegerField(read_only=True)
    runs_done = serializers.IntegerField(
        source="runs_ran",
        read_only=True,
        help_text="Runs that ran (done, failed or interrupted); not the cancelled or skipped "
        "ones, which runs_cancelled and runs_skipped count.",
    )
    runs_cancelled = serializers.IntegerField(
        read_only=True, help_text="Runs cancelled while they ran or waited."
    )
    runs_skipped = serializers.IntegerField(
        read_only=True,
        help_text="Runs never started: the batch ended before them (cancelled, failed).",
    )
    waiting_for = serializers.SerializerMethodField(
        help_text="What the batch waits for, as of this answer: the batch holding its "
        "server or load host, a quiet host, a target away; empty when nothing."
    )

    class Meta:
        model = Batch
        fields = [
            "id",
            "plan",
            "label",
            "target",
            "load_host",
            "status",
            "launched_by",
            "launched_by_user",
            "runs_done",
            "runs_cancelled",
            "runs_skipped",
            "runs_total",
            "created_at",
            "started_at",
            "finished_at",
            "waiting_for",
            "error",
        ]
        read_only_fields = fields

    def get_waiting_for(self, batch: Batch) -> str:
        return selectors.batch_waiting_for(batch)


class CurrentRunSerializer(serializers.ModelSerializer[Run]):
    class Meta:
        model = Run
        fields = ["id", "position", "label", "status", "threads", "settings", "started_at"]
        read_only_fields = fields


class BatchDetailSerializer(BatchSerializer):
    current_run = serializers.SerializerMethodField()
    remaining_s = serializers.SerializerMethodField(
        help_text="sysbench time still to run, from the expected durations."
    )
    analysis = serializers.SerializerMethodField(
        help_text="A scheduled batch's regression check against the plan's previous nights; "
        "null until it is checked, and for other batches."
    )

    class Meta(BatchSerializer.Meta):
        fields = [
            *BatchSerializer.Meta.fields,
            "current_run",
            "remaining_s",
            "params",
            "seed",
            "environment",
            "original_settings",
            "settings_restored_at",
            "warnings",
            "stages",
            "analysis",
            "worker",
            "heartbeat_at",
            "cancel_requested_at",
        ]
        read_only_fields = fields

    def _progress(self, batch: Batch) -> selectors.Progress:
        # Both method fields need it: read the runs once per batch.
        cache: dict[int, selectors.Progress] = self.__dict__.setdefault("_progress_of", {})
        if batch.pk not in cache:
            cache[batch.pk] = selectors.batch_progress(batch)
        return cache[batch.pk]

    @extend_schema_field(CurrentRunSerializer(allow_null=True))
    def get_current_run(self, batch: Batch) -> dict[str, Any] | None:
        current = self._progress(batch).current
        return CurrentRunSerializer(current).data if current else None

    def get_remaining_s(self, batch: Batch) -> float | None:
        return self._progress(batch).remaining_s

    @extend_schema_field(AnalysisSerializer(allow_null=True))
    def get_analysis(self, batch: Batch) -> dict[str, Any] | None:
        return batch.analysis or None


class BatchFilterSerializer(QueryParameters):
    plan = serializers.IntegerField(required=False, min_value=1)
    target = serializers.IntegerField(required=False, min_value=1)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    launched_by = serializers.ChoiceField(choices=LaunchedBy.choices, required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    regressed = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="true: the scheduled batches whose nightly check flagged a regression; "
        "false: those checked and not flagged.",
    )


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

    class Meta(RunSerializer.Meta):
        fields = [
            *RunSerializer.Meta.fields,
            "environment",
            "changed_variables",
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


class BatchList(generics.ListAPIView[Batch]):
    """Batches, newest first; filter by plan, target, status, who launched, creation time."""

    serializer_class = BatchSerializer

    def get_queryset(self) -> QuerySet[Batch]:
        filters = BatchFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.batches_filtered(**filters.validated_data)

    @extend_schema(parameters=[BatchFilterSerializer])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class BatchDetail(generics.RetrieveAPIView[Batch]):
    """A batch with its progress: runs done of total, the current run, time remaining."""

    queryset = selectors.batches_counted()
    serializer_class = BatchDetailSerializer


class BatchCancel(APIView):
    """Cancel a batch: one not started ends at once, a running one within a second."""

    @extend_schema(
        operation_id="batches_cancel", request=None, responses={200: BatchDetailSerializer}
    )
    def post(self, request: Request, pk: int) -> Response:
        batch = get_object_or_404(Batch.objects.select_related("plan"), pk=pk)
        permissions.require_cancel(request.user, batch)
        batches.batch_cancel(batch=batch, user=request.user)
        batch = selectors.batches_counted().get(pk=pk)
        return Response(BatchDetailSerializer(batch).data)


class BatchRuns(generics.ListAPIView[Run]):
    """The runs of a batch in their order of execution."""

    serializer_class = RunSerializer

    def get_queryset(self) -> QuerySet[Run]:
        batch = get_object_or_404(Batch, pk=self.kwargs["pk"])
        return selectors.batch_runs(batch)


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
