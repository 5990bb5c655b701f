"""What the API reads and writes. Serializers shape data; checks beyond types live in the
services (runs/definitions.py, runs/services.py, runs/schedules.py).

Secrets (Target.password, LoadHost.private_key) are write-only: they go in, never out;
`has_password` and `has_private_key` tell whether one is set. On update, a secret left
out is kept.
"""

from __future__ import annotations

from typing import Any

from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from runs import schedules, selectors
from runs.models import SAMPLE_FIGURES, Batch, LoadHost, Plan, Run, Sample, Status, Target
from runs.schedules import ScheduleInfo

SECRET_STYLE = {"input_type": "password"}


# --- targets and load hosts ---------------------------------------------------------------


class TargetSerializer(serializers.ModelSerializer[Target]):
    password = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        style=SECRET_STYLE,
        help_text="Stored encrypted; never returned. Left out on update: kept.",
    )
    has_password = serializers.SerializerMethodField()

    class Meta:
        model = Target
        fields = [
            "id",
            "name",
            "engine",
            "host",
            "port",
            "socket",
            "database",
            "user",
            "password",
            "has_password",
            "cpu_cores",
            "disk_count",
            "server_host",
            "created_at",
        ]

    def get_has_password(self, target: Target) -> bool:
        return bool(target.password)


class LoadHostSerializer(serializers.ModelSerializer[LoadHost]):
    private_key = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        style={**SECRET_STYLE, "base_template": "textarea.html"},
        help_text="PEM or OpenSSH private key, stored encrypted; never returned.",
    )
    has_private_key = serializers.SerializerMethodField()

    class Meta:
        model = LoadHost
        fields = [
            "id",
            "name",
            "kind",
            "address",
            "port",
            "user",
            "private_key",
            "has_private_key",
            "key_path",
            "host_key",
            "seen_host_key",
            "facts",
            "facts_at",
            "created_at",
        ]
        read_only_fields = ["host_key", "seen_host_key", "facts", "facts_at"]

    def get_has_private_key(self, load_host: LoadHost) -> bool:
        return bool(load_host.private_key)


class HostKeyConfirmSerializer(serializers.Serializer[Any]):
    fingerprint = serializers.CharField(
        max_length=200,
        help_text="The fingerprint of the key the host presented (see seen_host_key), "
        "as checked out of band, e.g. SHA256:...",
    )


class HostScanSerializer(serializers.Serializer[Any]):
    fingerprint = serializers.CharField(help_text="Compare it with the host's own, then confirm.")
    seen_host_key = serializers.CharField()


# --- plans and schedules ------------------------------------------------------------------


class ScheduleSerializer(serializers.Serializer[ScheduleInfo]):
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
    last_run_at = serializers.DateTimeField(read_only=True, allow_null=True)
    total_run_count = serializers.IntegerField(read_only=True)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        # DRF reads a time without an offset in UTC; the schedule's own zone is meant.
        raw = self.initial_data.get("clocked_at")
        parsed = parse_datetime(raw) if isinstance(raw, str) else None
        if parsed is not None and parsed.tzinfo is None:
            data["clocked_at"] = parsed
        return data


class PlanSerializer(serializers.ModelSerializer[Plan]):
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
        help_text='Server settings axes, e.g. {"innodb_flush_log_at_trx_commit": ["1", "2"]}.',
    )
    option_axes = serializers.DictField(
        child=serializers.ListField(child=serializers.JSONField(), min_length=1),
        required=False,
        help_text='Other sysbench options as axes, e.g. {"tables": [1, 4]}.',
    )
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
            "load_host",
            "test",
            "options",
            "threads",
            "server_settings",
            "option_axes",
            "repeats",
            "warmup_s",
            "order_policy",
            "dataset_policy",
            "cleanup",
            "script",
            "notify_emails",
            "notify_webhook",
            "regression_threshold_pct",
            "history_nights",
            "schedule",
            "created_by",
            "created_at",
            "updated_at",
        ]
        extra_kwargs = {
            "repeats": {"min_value": 1, "max_value": 1000},
            "regression_threshold_pct": {"min_value": 0.1, "max_value": 100},
            "history_nights": {"min_value": 5, "max_value": 365},
        }

    @extend_schema_field(ScheduleSerializer(allow_null=True))
    def get_schedule(self, plan: Plan) -> dict[str, Any] | None:
        if plan.schedule is None:
            return None
        return ScheduleSerializer(schedules.schedule_describe(plan.schedule)).data


class PlanCheckSerializer(serializers.Serializer[Any]):
    """What saving a plan found: how many runs a batch of it has, and warnings."""

    run_count = serializers.IntegerField()
    warnings = serializers.ListField(child=serializers.CharField())


class PreflightStepSerializer(serializers.Serializer[Any]):
    host = serializers.CharField()
    step = serializers.CharField()
    status = serializers.ChoiceField(choices=["ok", "warning", "failed"])
    message = serializers.CharField(allow_blank=True)


class PreflightSerializer(serializers.Serializer[Any]):
    ok = serializers.BooleanField(help_text="No step failed.")
    steps = PreflightStepSerializer(many=True)


# --- batches, runs, samples ---------------------------------------------------------------


class BatchSerializer(serializers.ModelSerializer[Batch]):
    launched_by_user: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    runs_total = serializers.IntegerField(read_only=True)
    runs_done = serializers.IntegerField(read_only=True, help_text="Runs that ended, any way.")

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
            "runs_total",
            "created_at",
            "started_at",
            "finished_at",
            "waiting_for",
            "error",
        ]
        read_only_fields = fields


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
            "steps",
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


class BatchFilterSerializer(serializers.Serializer[Any]):
    plan = serializers.IntegerField(required=False, min_value=1)
    target = serializers.IntegerField(required=False, min_value=1)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    launched_by = serializers.CharField(required=False, max_length=10)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)


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
        ]
        read_only_fields = fields


class RunDetailSerializer(RunSerializer):
    environment = serializers.JSONField(
        source="batch.environment", read_only=True, help_text="Where the batch ran."
    )

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "environment", "argv", "reports", "histogram"]
        read_only_fields = fields


class SampleSerializer(serializers.ModelSerializer[Sample]):
    class Meta:
        model = Sample
        fields = [*SAMPLE_FIGURES, "received_at"]
        read_only_fields = fields


class SamplesQuerySerializer(serializers.Serializer[Any]):
    after = serializers.IntegerField(
        min_value=0, default=0, help_text="Only samples with a greater seq."
    )
    limit = serializers.IntegerField(min_value=1, max_value=5000, default=1000)


class SamplePageSerializer(serializers.Serializer[Any]):
    run = serializers.IntegerField()
    run_status = serializers.ChoiceField(choices=Status.choices)
    finished = serializers.BooleanField(
        help_text="The run ended and every one of its samples was returned: stop polling."
    )
    last_seq = serializers.IntegerField(help_text="Pass it as `after` in the next call.")
    next = serializers.URLField(allow_null=True, help_text="More samples are stored already.")
    results = SampleSerializer(many=True)


# --- imports ------------------------------------------------------------------------------


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


# --- tokens -------------------------------------------------------------------------------


class TokenSerializer(serializers.Serializer[Any]):
    token_key = serializers.CharField(read_only=True, help_text="The token's first characters.")
    name = serializers.CharField(max_length=100, default="", allow_blank=True)
    created = serializers.DateTimeField(read_only=True)
    expiry = serializers.DateTimeField(read_only=True, allow_null=True)
    expires_in_days = serializers.IntegerField(
        write_only=True,
        required=False,
        allow_null=True,
        min_value=1,
        max_value=3650,
        help_text="Leave out for a token that lives until revoked.",
    )


class NewTokenSerializer(TokenSerializer):
    token = serializers.CharField(
        read_only=True, help_text="The token itself: shown this once, keep it safe."
    )
