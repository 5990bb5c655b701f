"""The REST API under /api/v1/. Thin views: each reads through a selector or writes through
a service, with serializers for what goes in and out. Errors: runs/api_errors.py.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, parsers, renderers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from runs import (
    definitions,
    hosts,
    importer,
    preflight,
    schedules,
    selectors,
    services,
    tokens,
)
from runs.models import FINISHED_STATUSES, Batch, LaunchedBy, LoadHost, Plan, Run, Target
from runs.serializers import (
    BatchDetailSerializer,
    BatchFilterSerializer,
    BatchSerializer,
    HostKeyConfirmSerializer,
    HostScanSerializer,
    ImportResultSerializer,
    ImportSerializer,
    LoadHostSerializer,
    NewTokenSerializer,
    PlanSerializer,
    PreflightSerializer,
    RunDetailSerializer,
    RunSerializer,
    SamplePageSerializer,
    SampleSerializer,
    SamplesQuerySerializer,
    ScheduleSerializer,
    TargetSerializer,
    TokenSerializer,
)


def _assign(instance: Any, values: dict[str, Any]) -> Any:
    for name, value in values.items():
        setattr(instance, name, value)
    return instance


def _user(request: Request) -> User:
    # IsAuthenticated lets no anonymous request through.
    assert isinstance(request.user, User)
    return request.user


# --- tokens -------------------------------------------------------------------------------


class TokenList(generics.ListCreateAPIView[Any]):
    """Your API tokens. A new token is shown once, in the answer to its creation."""

    serializer_class = TokenSerializer

    def get_queryset(self) -> QuerySet[Any]:
        return tokens.tokens_of(_user(self.request))

    @extend_schema(request=TokenSerializer, responses={201: NewTokenSerializer})
    def post(self, request: Request) -> Response:
        given = TokenSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        days = given.validated_data.get("expires_in_days")
        token, text = tokens.token_create(
            user=_user(request),
            name=given.validated_data["name"],
            expires_in=None if days is None else timedelta(days=days),
        )
        answer = {
            "token_key": token.token_key,
            "name": getattr(token, "name", given.validated_data["name"]),
            "created": token.created,
            "expiry": token.expiry,
            "token": text,
        }
        return Response(NewTokenSerializer(answer).data, status=status.HTTP_201_CREATED)


class TokenRevoke(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, token_key: str) -> Response:
        if not tokens.token_revoke(user=_user(request), token_key=token_key):
            return Response(
                {"field": "token_key", "message": "you have no such token"},
                status=status.HTTP_404_NOT_FOUND,
            )
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- targets and load hosts ---------------------------------------------------------------


class TargetList(generics.ListCreateAPIView[Target]):
    queryset = Target.objects.all()
    serializer_class = TargetSerializer

    def perform_create(self, serializer: BaseSerializer[Target]) -> None:
        serializer.instance = definitions.target_save(target=Target(**serializer.validated_data))


class TargetDetail(generics.RetrieveUpdateDestroyAPIView[Target]):
    queryset = Target.objects.all()
    serializer_class = TargetSerializer

    def perform_update(self, serializer: BaseSerializer[Target]) -> None:
        definitions.target_save(target=_assign(serializer.instance, serializer.validated_data))


class LoadHostList(generics.ListCreateAPIView[LoadHost]):
    queryset = LoadHost.objects.all()
    serializer_class = LoadHostSerializer

    def perform_create(self, serializer: BaseSerializer[LoadHost]) -> None:
        load_host = LoadHost(**serializer.validated_data)
        serializer.instance = definitions.loadhost_save(load_host=load_host)


class LoadHostDetail(generics.RetrieveUpdateDestroyAPIView[LoadHost]):
    queryset = LoadHost.objects.all()
    serializer_class = LoadHostSerializer

    def perform_update(self, serializer: BaseSerializer[LoadHost]) -> None:
        load_host = _assign(serializer.instance, serializer.validated_data)
        definitions.loadhost_save(load_host=load_host)


class LoadHostScan(APIView):
    """Connect to the SSH host without logging in and keep the key it presents as seen."""

    @extend_schema(
        operation_id="load_hosts_scan", request=None, responses={200: HostScanSerializer}
    )
    def post(self, request: Request, pk: int) -> Response:
        load_host = get_object_or_404(LoadHost, pk=pk)
        fingerprint = hosts.loadhost_scan(load_host=load_host)
        answer = {"fingerprint": fingerprint, "seen_host_key": load_host.seen_host_key}
        return Response(HostScanSerializer(answer).data)


class LoadHostConfirmHostKey(APIView):
    """Pin the key the last scan saw, once you checked its fingerprint on the host itself."""

    @extend_schema(
        operation_id="load_hosts_confirm_host_key",
        request=HostKeyConfirmSerializer,
        responses={200: LoadHostSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        load_host = get_object_or_404(LoadHost, pk=pk)
        given = HostKeyConfirmSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        fingerprint = given.validated_data["fingerprint"]
        load_host = hosts.loadhost_confirm_host_key(load_host=load_host, fingerprint=fingerprint)
        return Response(LoadHostSerializer(load_host).data)


# --- plans --------------------------------------------------------------------------------


def _plans() -> QuerySet[Plan]:
    return Plan.objects.select_related(
        "target",
        "load_host",
        "created_by",
        "schedule__crontab",
        "schedule__interval",
        "schedule__clocked",
    )


class PlanList(generics.ListCreateAPIView[Plan]):
    serializer_class = PlanSerializer

    def get_queryset(self) -> QuerySet[Plan]:
        return _plans()

    def perform_create(self, serializer: BaseSerializer[Plan]) -> None:
        plan = Plan(**serializer.validated_data, created_by=_user(self.request))
        definitions.plan_save(plan=plan)
        serializer.instance = plan


class PlanDetail(generics.RetrieveUpdateDestroyAPIView[Plan]):
    serializer_class = PlanSerializer

    def get_queryset(self) -> QuerySet[Plan]:
        return _plans()

    def perform_update(self, serializer: BaseSerializer[Plan]) -> None:
        definitions.plan_save(plan=_assign(serializer.instance, serializer.validated_data))

    def perform_destroy(self, instance: Plan) -> None:
        definitions.plan_delete(plan=instance)


class PlanPreflight(APIView):
    """Check what would break a batch of the plan (load host, target, limits), running none."""

    @extend_schema(
        operation_id="plans_preflight", request=None, responses={200: PreflightSerializer}
    )
    def post(self, request: Request, pk: int) -> Response:
        report = preflight.plan_preflight(plan=get_object_or_404(_plans(), pk=pk))
        return Response(PreflightSerializer(report.to_dict()).data)


class PlanLaunch(APIView):
    """Launch a batch of the plan now; a worker runs it."""

    @extend_schema(
        operation_id="plans_launch", request=None, responses={201: BatchDetailSerializer}
    )
    def post(self, request: Request, pk: int) -> Response:
        plan = get_object_or_404(_plans(), pk=pk)
        batch = services.batch_launch(plan=plan, launched_by=LaunchedBy.API, user=_user(request))
        batch = selectors.batches_counted().get(pk=batch.pk)
        return Response(BatchDetailSerializer(batch).data, status=status.HTTP_201_CREATED)


class PlanSchedule(APIView):
    """When beat launches the plan on its own: cron (in a time zone), interval or once."""

    def _plan(self, pk: int) -> Plan:
        return get_object_or_404(_plans(), pk=pk)

    @extend_schema(responses={200: ScheduleSerializer})
    def get(self, request: Request, pk: int) -> Response:
        plan = self._plan(pk)
        if plan.schedule is None:
            return Response(
                {"field": None, "message": "this plan has no schedule"},
                status=status.HTTP_404_NOT_FOUND,
            )
        return Response(ScheduleSerializer(schedules.schedule_describe(plan.schedule)).data)

    @extend_schema(request=ScheduleSerializer, responses={200: ScheduleSerializer})
    def put(self, request: Request, pk: int) -> Response:
        plan = self._plan(pk)
        given = ScheduleSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        values = given.validated_data
        task = schedules.plan_schedule_set(
            plan=plan,
            cron=values.get("cron"),
            interval_s=values.get("interval_s"),
            clocked_at=values.get("clocked_at"),
            timezone=values["timezone"],
            enabled=values["enabled"],
        )
        return Response(ScheduleSerializer(schedules.schedule_describe(task)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        schedules.plan_schedule_delete(plan=self._plan(pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- batches and runs ---------------------------------------------------------------------


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
        batch = get_object_or_404(Batch, pk=pk)
        services.batch_cancel(batch=batch, user=request.user)
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
    def get(self, request: Request, pk: int) -> Response:
        query = SamplesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        after, limit = query.validated_data["after"], query.validated_data["limit"]
        # The status is read first: a run that had ended by then has stored every sample.
        run = get_object_or_404(Run.objects.only("id", "status"), pk=pk)
        samples = selectors.samples_after(run, after=after, limit=limit)
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


def _with_after(request: Request, after: int) -> str:
    params = request.query_params.copy()
    params["after"] = str(after)
    return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")
