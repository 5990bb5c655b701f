"""Plans: list, create, read, update, delete, preflight, launch, and their schedules."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from runs.api.batches import BatchDetailSerializer
from runs.api.common import OWNED, JSONBody, JSONModelBody, assign, request_user
from runs.api.setup.plan_servers import ServersSerializer
from runs.models import LaunchedBy, LoadHost, Plan
from runs.services import batches, definitions, permissions, selectors
from runs.services.nightly import schedules
from runs.services.nightly.schedules import ScheduleInfo
from runs.services.plans import plan_preflight
from runs.services.queue import BrokerUnavailable
from runs.sysbench import suites
from runs.sysbench.options import ALL_TESTS


class ScheduleSerializer(JSONBody[ScheduleInfo]):
    """A plan's schedule: exactly one of cron, interval_s and clocked_at."""

    kind = serializers.ChoiceField(choices=["cron", "interval", "clocked"], read_only=True)
    cron = serializers.CharField(
        max_length=200,
        required=False,
        allow_null=True,
        help_text='Five fields, minute hour day-of-month month day-of-week: "0 2 * * *".',
    )
    interval_s = serializers.IntegerField(
        min_value=1, max_value=10 * 365 * 86400, required=False, allow_null=True
    )
    clocked_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="Once, at this time; read in `timezone` when it has no offset.",
    )
    timezone = serializers.CharField(
        max_length=64, default="UTC", help_text="IANA name, e.g. Europe/Paris; for cron."
    )
    enabled = serializers.BooleanField(default=True)
    run_now = serializers.BooleanField(
        default=False,
        write_only=True,
        help_text="With a clocked_at already past: launch at once instead of refusing it.",
    )
    last_run_at = serializers.DateTimeField(read_only=True, allow_null=True)
    total_run_count = serializers.IntegerField(read_only=True)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        # DRF reads a time without an offset in UTC; the schedule's own zone is meant.
        raw = self.initial_data.get("clocked_at")
        parsed = parse_datetime(raw) if isinstance(raw, str) else None
        if parsed is not None and parsed.tzinfo is None:
            data["clocked_at"] = parsed
        return data


class PlanSerializer(JSONModelBody[Plan]):
    moved = {"more_targets": "servers.targets", "server_axes": "servers"}

    test = serializers.ChoiceField(choices=ALL_TESTS, default="oltp_read_write")
    threads = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=100_000),
        min_length=1,
        max_length=1000,
        help_text="Threads axis, e.g. [1, 4, 16, 64].",
    )
    options = serializers.DictField(
        child=serializers.JSONField(),
        required=False,
        help_text='Fixed sysbench options, e.g. {"time": 60, "tables": 4}.',
    )
    server_settings = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField(max_length=256), min_length=1),
        required=False,
        help_text='Server settings axes, e.g. {"innodb_flush_log_at_trx_commit": ["1", "2"]}. '
        "Settings, never secrets: a restart-only setting whose name says it holds a credential "
        "(report_password, wsrep_sst_auth, *_key) or whose value reads as user:password is "
        "refused, named without its value.",
    )
    tests = serializers.ListField(
        child=serializers.DictField(child=serializers.JSONField()),
        required=False,
        max_length=64,
        help_text="The tests axis, in order (the first is `test`): "
        '[{"test": "oltp_point_select", "options": {}, "family": "point", "name": '
        '"point-select"}, {"test": "oltp_insert", "options": {}, "family": "write", '
        '"rebuild": true}]; an item with rebuild gets a data set of its own, prepared '
        "afresh; the others share one, the tests that only read before those that write. "
        "Empty: `test` alone. GET /api/v1/plans/suites gives the built-in suite.",
    )
    option_axes = serializers.DictField(
        child=serializers.ListField(child=serializers.JSONField(), min_length=1),
        required=False,
        help_text='Other sysbench options as axes, e.g. {"tables": [1, 4]}.',
    )
    auto = serializers.JSONField(
        required=False,
        help_text="Auto modes that add runs until the answer is clear, each optional: "
        '{"repeats": {"target_pct": 2, "max": 5}, "threads": {"max": 64, "slo_p95_ms": 50, '
        '"rise_pct": 5}, "rate": {"start": 100, "max": 1000000, "slo_p95_ms": 50, '
        '"tolerance_pct": 5, "precision_pct": 10}}; `true` takes the defaults. With threads, '
        "give threads [1]; with rate, no rate option. Threads and rate are not searched "
        "together.",
    )
    extra_load_hosts = serializers.PrimaryKeyRelatedField(
        many=True,
        required=False,
        queryset=LoadHost.objects.all(),
        help_text="More SSH load hosts that drive each cell together with load_host (ids); "
        "load_split says whether the cell's threads and rate are divided between them or "
        "run on each.",
    )
    servers = ServersSerializer(required=False)
    schedule = serializers.SerializerMethodField(
        help_text="Set with PUT /api/v1/plans/{id}/schedule."
    )
    created_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Plan
        fields = [
            "id",
            "name",
            "target",
            "servers",
            "load_host",
            "extra_load_hosts",
            "load_split",
            "test",
            "tests",
            "options",
            "threads",
            "server_settings",
            "option_axes",
            "repeats",
            "warmup_s",
            "order_policy",
            "dataset_policy",
            "cleanup",
            "seed",
            "quiet_wait_s",
            "script",
            "notify_emails",
            "notify_webhook",
            "regression_threshold_pct",
            "history_nights",
            "auto",
            "schedule",
            "created_by",
            "created_at",
            "updated_at",
        ]
        extra_kwargs = {
            "repeats": {"min_value": 1, "max_value": 1000},
            "regression_threshold_pct": {"min_value": 0.1, "max_value": 100},
            "history_nights": {"min_value": 5, "max_value": 365},
            "warmup_s": {"min_value": 0, "max_value": 604_800},
            "seed": {"min_value": 0, "max_value": batches.MAX_SEED},
        }

    @extend_schema_field(ScheduleSerializer(allow_null=True))
    def get_schedule(self, plan: Plan) -> dict[str, Any] | None:
        if plan.schedule is None:
            return None
        return ScheduleSerializer(schedules.schedule_describe(plan.schedule)).data


class Suites(APIView):
    """The built-in suites a plan's tests axis may start from (edited at will)."""

    @extend_schema(operation_id="plans_suites", responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        return Response({"microbenchmarks": suites.microbenchmarks()})


class PlanCheckSerializer(serializers.Serializer[Any]):
    """What saving a plan found: how many runs a batch of it has, and warnings."""

    run_count = serializers.IntegerField()
    warnings = serializers.ListField(child=serializers.CharField())


class PreflightCheckSerializer(serializers.Serializer[Any]):
    host = serializers.CharField()
    check = serializers.CharField(help_text="What was checked: ssh, sysbench, disk, binlog, …")
    status = serializers.ChoiceField(choices=["ok", "warning", "failed"])
    message = serializers.CharField(allow_blank=True)


class PreflightSerializer(serializers.Serializer[Any]):
    ok = serializers.BooleanField(help_text="No check failed.")
    checks = PreflightCheckSerializer(many=True)


def _plans() -> QuerySet[Plan]:
    return Plan.objects.select_related(
        "target",
        "load_host",
        "created_by",
        "schedule__crontab",
        "schedule__interval",
        "schedule__clocked",
    ).prefetch_related("extra_load_hosts", "plan_servers")


class PlanList(generics.ListCreateAPIView[Plan]):
    serializer_class = PlanSerializer

    def get_queryset(self) -> QuerySet[Plan]:
        return _plans()

    def perform_create(self, serializer: BaseSerializer[Plan]) -> None:
        values = dict(serializer.validated_data)
        extra = values.pop("extra_load_hosts", [])
        servers = dict(values.pop("servers", {}))
        more = servers.pop("targets", [])
        plan = Plan(**values, servers=servers, created_by=request_user(self.request))
        permissions.require_use(self.request.user, plan, extra, more)
        definitions.plan_save(plan=plan, extra_load_hosts=extra, server_targets=more)
        serializer.instance = plan


class PlanDetail(generics.RetrieveUpdateDestroyAPIView[Plan]):
    serializer_class = PlanSerializer
    permission_classes = OWNED

    def get_queryset(self) -> QuerySet[Plan]:
        return _plans()

    def perform_update(self, serializer: BaseSerializer[Plan]) -> None:
        values = dict(serializer.validated_data)
        extra = values.pop("extra_load_hosts", None)  # left out: kept as they are
        more = None  # the same for the servers axis; given, it is replaced whole
        if "servers" in values:
            values["servers"] = dict(values["servers"])
            more = values["servers"].pop("targets", [])
        plan = assign(serializer.instance, values)
        permissions.require_use(self.request.user, plan, extra, more)
        definitions.plan_save(plan=plan, extra_load_hosts=extra, server_targets=more)

    def perform_destroy(self, instance: Plan) -> None:
        definitions.plan_delete(plan=instance)


class PlanPreflight(APIView):
    """Check what would break a batch of the plan (load host, target, limits), running none."""

    @extend_schema(
        operation_id="plans_preflight", request=None, responses={200: PreflightSerializer}
    )
    def post(self, request: Request, pk: int) -> Response:
        plan = get_object_or_404(_plans(), pk=pk)
        permissions.require_use(request.user, plan)
        report = plan_preflight(plan=plan)
        return Response(PreflightSerializer(report.to_dict()).data)


class LaunchSerializer(serializers.Serializer[Any]):
    seed = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=batches.MAX_SEED,
        help_text="Of the interleaved order, for this launch: the same seed replays the same "
        "order. Omitted: the plan's seed, else a new one (recorded on the batch).",
    )
    launched_by = serializers.ChoiceField(
        choices=[LaunchedBy.API, LaunchedBy.CLI],
        default=LaunchedBy.API,
        help_text="How the batch is recorded as launched: `cli` by the `benchdash` command "
        "(the history's `cli`, from the command), else `api`. A schedule, a page or a "
        "confirmation cannot be claimed.",
    )


class PlanLaunch(APIView):
    """Launch a batch of the plan now; a worker runs it."""

    @extend_schema(
        operation_id="plans_launch",
        request=LaunchSerializer,
        responses={201: BatchDetailSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        plan = get_object_or_404(_plans(), pk=pk)
        permissions.require_launch(request.user, plan)
        given = LaunchSerializer(data=request.data or {})
        given.is_valid(raise_exception=True)
        try:
            batch = batches.batch_launch(
                plan=plan,
                launched_by=given.validated_data["launched_by"],
                user=request_user(request),
                seed=given.validated_data.get("seed"),
            )
        except BrokerUnavailable as e:
            raise QueueUnavailable(f"not launched: {e}") from e
        batch = selectors.batches_counted().get(pk=batch.pk)
        return Response(BatchDetailSerializer(batch).data, status=status.HTTP_201_CREATED)


class QueueUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "the task queue cannot be reached"


class PlanSchedule(APIView):
    """When beat launches the plan on its own: cron (in a time zone), interval or once."""

    def _plan(self, pk: int) -> Plan:
        return get_object_or_404(_plans(), pk=pk)

    def _changed(self, request: Request, pk: int) -> Plan:
        plan = self._plan(pk)
        permissions.require(request.user, "change", plan)
        return plan

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
        plan = self._changed(request, pk)
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
            run_now=values["run_now"],
        )
        return Response(ScheduleSerializer(schedules.schedule_describe(task)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        schedules.plan_schedule_delete(plan=self._changed(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
