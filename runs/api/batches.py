"""Batches, their runs, and the samples of a run (JSON or CSV, polled with ?after=)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.api.common import QueryParameters
from runs.api.nightly.history import AnalysisSerializer
from runs.api.runs import RunSerializer
from runs.models import (
    Batch,
    LaunchedBy,
    Run,
    Status,
)
from runs.services import batches, permissions, selectors


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
