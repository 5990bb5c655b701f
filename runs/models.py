"""The product's vocabulary: targets, load hosts, plans, batches, runs and samples."""

from __future__ import annotations

import operator
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from knox.models import AbstractAuthToken

from runs.secrets import EncryptedTextField


class Status(models.TextChoices):
    QUEUED = "queued"
    WAITING = "waiting"
    PREPARING = "preparing"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    SKIPPED = "skipped"


ACTIVE_STATUSES = (Status.WAITING, Status.PREPARING, Status.RUNNING)
FINISHED_STATUSES = (
    Status.DONE,
    Status.FAILED,
    Status.CANCELLED,
    Status.INTERRUPTED,
    Status.SKIPPED,
)


def _status_field() -> models.CharField[str, str]:
    return models.CharField(
        max_length=12, choices=Status.choices, default=Status.QUEUED, db_index=True
    )


def _status_constraint(name: str) -> models.CheckConstraint:
    return models.CheckConstraint(condition=Q(status__in=Status.values), name=name)


class Engine(models.TextChoices):
    MYSQL = "mysql", "MySQL"
    MARIADB = "mariadb", "MariaDB"
    POSTGRESQL = "postgresql", "PostgreSQL"


class RestartMode(models.TextChoices):
    NEVER = "", "Never restarted by benchdash"
    MANAGED = "managed", "A managed instance benchdash starts and stops itself"
    SERVICE = "service", "A service with a restart command and a config include"


class Target(models.Model):
    """A database server under test."""

    name = models.CharField(max_length=100, unique=True)
    engine = models.CharField(max_length=12, choices=Engine.choices, default=Engine.MARIADB)
    host = models.CharField(max_length=255, blank=True, help_text="Empty when a socket is used.")
    port = models.PositiveIntegerField(null=True, blank=True)
    socket = models.CharField(max_length=255, blank=True, help_text="Unix socket path.")
    database = models.CharField(max_length=64, default="sbtest")
    user = models.CharField(max_length=80)
    password = EncryptedTextField(blank=True, help_text="Stored encrypted; never shown again.")
    cpu_cores = models.PositiveIntegerField(
        null=True, blank=True, help_text="CPU cores of the server, for the cores*2+disks line."
    )
    disk_count = models.PositiveIntegerField(null=True, blank=True)
    server_host = models.ForeignKey(
        "LoadHost",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="An SSH host on the database server itself, to read its cores, disks, OS, "
        "and where its restarts run. Setting or changing it needs runs.manage_restarts.",
    )
    restart_mode = models.CharField(
        max_length=8,
        choices=RestartMode.choices,
        default=RestartMode.NEVER,
        blank=True,
        help_text="Whether benchdash may restart this server, and how: only a target that "
        "opted in gets restart-only settings, config files or versions as axes. Setting or "
        "changing it needs runs.manage_restarts (staff have it).",
    )
    restart_config = models.JSONField(
        default=dict,
        blank=True,
        help_text="How it is restarted. managed: "
        '{"installs": [{"label": "10.11", "basedir": ..., "datadir": ..., "config": ...}]}; '
        'service: {"command": "systemd", "values": {"unit": "mariadb"}, '
        '"include": "/etc/mysql/conf.d/99-benchdash.cnf"}: a command the operator allowed '
        "(BENCHDASH_RESTART_COMMANDS), its placeholders' values one word each, the include "
        "inside an operator's folder. Setting or changing it needs runs.manage_restarts.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Its owner: who may change, delete or use it, besides staff and the "
        "members of a group granted the permission.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        # Opting a server into restarts runs commands on its machine: an operator's act.
        permissions = [("manage_restarts", "May opt servers into restarts by benchdash")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(host="") | ~Q(socket=""), name="target_host_or_socket"
            ),
            models.CheckConstraint(
                condition=Q(restart_mode__in=RestartMode.values), name="target_restart_valid"
            ),
            models.CheckConstraint(
                condition=Q(engine__in=Engine.values), name="target_engine_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def address(self) -> str:
        return self.socket or f"{self.host}:{self.port or ''}".rstrip(":")

    def describe(self) -> dict[str, Any]:
        """Everything about the target but its password, frozen on each batch."""
        return {
            "name": self.name,
            "engine": self.engine,
            "host": self.host,
            "port": self.port,
            "socket": self.socket,
            "database": self.database,
            "user": self.user,
            "cpu_cores": self.cpu_cores,
            "disk_count": self.disk_count,
            "restart_mode": self.restart_mode,
        }


class LoadHost(models.Model):
    """Where sysbench runs: `local` runs it as a subprocess of the worker, `ssh` on a
    remote machine whose host key is pinned once a user confirmed its fingerprint."""

    class Kind(models.TextChoices):
        LOCAL = "local"
        SSH = "ssh", "SSH"

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.SSH)
    address = models.CharField(max_length=255, blank=True, help_text="Host name or IP (SSH).")
    port = models.PositiveIntegerField(default=22)
    user = models.CharField(max_length=80, blank=True)
    private_key = EncryptedTextField(
        blank=True, help_text="Private key (PEM/OpenSSH), stored encrypted; never shown again."
    )
    host_key = models.TextField(
        blank=True, help_text="The pinned host key: '<type> <base64>', set on confirmation."
    )
    seen_host_key = models.TextField(
        blank=True, help_text="The key the host presented last, awaiting confirmation."
    )
    facts = models.JSONField(default=dict, blank=True, help_text="OS, CPU, memory, limits.")
    facts_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Its owner: who may change, delete or use it, besides staff and the "
        "members of a group granted the permission.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["local", "ssh"]), name="loadhost_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(kind="local") | ~Q(address=""), name="loadhost_ssh_needs_address"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class OrderPolicy(models.TextChoices):
    INTERLEAVED = "interleaved", "Interleaved (shuffled rounds)"
    RAMP = "ramp", "Ramp (threads ascending)"


class DatasetPolicy(models.TextChoices):
    SHARED = "shared", "Prepare once per data set"
    FRESH = "fresh", "Prepare before every cell"
    EXISTING = "existing", "Use the tables already there (no prepare, no cleanup)"


class LoadSplit(models.TextChoices):
    DIVIDE = "divide", "Divide threads and rate between the load hosts"
    EACH = "each", "Each load host runs the cell's threads and rate"


class LuaScript(models.Model):
    """A custom sysbench Lua script: arbitrary code, so uploading it needs a permission,
    and it runs in a private directory of its own (on the local host too, unless
    BENCHDASH_LOCAL_SCRIPTS is off)."""

    name = models.CharField(max_length=100, unique=True)
    content = models.TextField(help_text="The entry script's text.")
    files = models.JSONField(
        default=dict,
        blank=True,
        help_text="A bundle's other files, relative path → text, staged beside the entry "
        "script so that require() finds them; empty for a one-file script.",
    )
    entry = models.CharField(
        max_length=200, blank=True, help_text="The entry script's file name in a bundle."
    )
    version = models.PositiveIntegerField(default=1, help_text="Counts uploads, from 1.")
    digests = models.JSONField(
        default=dict, blank=True, help_text="SHA-256 of every file of this version, by path."
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        permissions = [("upload_luascript", "May upload custom Lua scripts")]

    def __str__(self) -> str:
        return self.name


class LuaScriptVersion(models.Model):
    """An earlier upload of a script or bundle, kept as it was: a batch names the version
    that ran, and a version is never changed."""

    script = models.ForeignKey(LuaScript, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    content = models.TextField()
    files = models.JSONField(default=dict, blank=True)
    entry = models.CharField(max_length=200, blank=True)
    digests = models.JSONField(default=dict, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["script", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["script", "version"], name="script_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.script} v{self.version}"


class Plan(models.Model):
    """A reusable experiment: what to run where, and the parameter matrix."""

    name = models.CharField(max_length=200, unique=True)
    target = models.ForeignKey(
        Target, on_delete=models.PROTECT, null=True, blank=True, related_name="plans"
    )
    load_host = models.ForeignKey(LoadHost, on_delete=models.PROTECT, related_name="plans")
    server_targets = models.ManyToManyField(
        Target,
        through="PlanServer",
        blank=True,
        related_name="+",
        help_text="The servers axis's targets beyond `target`, in the user's order; `target` "
        "is the first, the baseline of the comparison.",
    )
    test = models.CharField(max_length=64, default="oltp_read_write")
    tests = models.JSONField(
        default=list,
        blank=True,
        help_text="The tests axis, in the user's order: "
        '[{"test": "oltp_point_select", "options": {...}, "family": "point"}, ...]; '
        "empty: `test` alone.",
    )
    options = models.JSONField(
        default=dict, blank=True, help_text='Fixed sysbench options, e.g. {"time": 60}.'
    )
    threads = models.JSONField(default=list, help_text="Threads axis, e.g. [1, 4, 16, 64].")
    servers = models.JSONField(
        default=dict,
        blank=True,
        help_text="The servers axis beyond its targets: installs and configs restart the "
        'server (targets that opted in only): {"installs": ["10.11", "11.4"], "configs": '
        '[{"label": "odirect", "text": "innodb_flush_method=O_DIRECT"}], "after_restart": '
        '"warm", "warm_s": 10}.',
    )
    server_settings = models.JSONField(
        default=dict,
        blank=True,
        help_text='Server settings axes, e.g. {"innodb_flush_log_at_trx_commit": ["1", "2"]}.',
    )
    option_axes = models.JSONField(
        default=dict,
        blank=True,
        help_text='Other sysbench options as axes, e.g. {"tables": [1, 4]}.',
    )
    repeats = models.PositiveIntegerField(default=1)
    warmup_s = models.PositiveIntegerField(
        default=0, help_text="Seconds excluded from the steady-state figures."
    )
    order_policy = models.CharField(
        max_length=12, choices=OrderPolicy.choices, default=OrderPolicy.INTERLEAVED
    )
    dataset_policy = models.CharField(
        max_length=8, choices=DatasetPolicy.choices, default=DatasetPolicy.SHARED
    )
    cleanup = models.BooleanField(default=True, help_text="Drop the data set after the batch.")
    script = models.ForeignKey(
        LuaScript,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        help_text="A custom Lua script instead of a built-in test (SSH load hosts only).",
    )
    notify_emails = models.TextField(
        blank=True,
        help_text="Addresses told of regressions and failed nightly batches, one a line.",
    )
    notify_webhook = models.URLField(
        blank=True, help_text="A URL that receives the same news as JSON (POST)."
    )
    regression_threshold_pct = models.FloatField(
        default=5.0, help_text="Smallest change flagged as a regression, beyond the noise."
    )
    history_nights = models.PositiveIntegerField(
        default=7, help_text="Successful nights the baseline is the median of."
    )
    extra_load_hosts = models.ManyToManyField(
        LoadHost,
        blank=True,
        related_name="+",
        help_text="More SSH load hosts that drive each cell together with load_host, for a "
        "server one host cannot saturate.",
    )
    load_split = models.CharField(
        max_length=8,
        choices=LoadSplit.choices,
        default=LoadSplit.DIVIDE,
        help_text="With several load hosts: divide each cell's threads (and --rate) between "
        "them, or run the cell's threads on each.",
    )
    auto = models.JSONField(
        default=dict,
        blank=True,
        help_text="Auto modes that add runs until the answer is clear: "
        '{"repeats": {"target_pct": 2, "max": 5}, "threads": {"max": 64, "slo_p95_ms": 50}, '
        '"rate": {"start": 100, "max": 100000}} (runs/analysis/auto/).',
    )
    quiet_wait_s = models.PositiveIntegerField(
        default=0,
        help_text="Before each cell, wait up to this many seconds for the server host and "
        "the load hosts to be quiet (no other process using the CPU); 0 does not wait. A "
        "cell that starts on a busy host is flagged either way.",
    )
    baseline_from = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Nights before this no longer judge the nights after it (an alert "
        "accepted as the new baseline).",
    )
    seed = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="Seed of the interleaved order: the same seed replays the same order. "
        "Empty: a new seed at each launch, recorded on the batch.",
    )
    schedule = models.OneToOneField(
        "django_celery_beat.PeriodicTask",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="plan",
        help_text="When beat launches this plan on its own.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(repeats__gte=1), name="plan_repeats_positive"),
            models.CheckConstraint(
                condition=Q(order_policy__in=OrderPolicy.values), name="plan_order_valid"
            ),
            models.CheckConstraint(
                condition=Q(dataset_policy__in=DatasetPolicy.values), name="plan_dataset_valid"
            ),
            models.CheckConstraint(
                condition=Q(load_split__in=LoadSplit.values), name="plan_load_split_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class PlanServer(models.Model):
    """One of the servers axis's targets beyond the plan's first target, in the user's order."""

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="plan_servers")
    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveIntegerField(help_text="Its column: 1 is the first after `target`.")

    class Meta:
        ordering = ["plan", "position"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "target"], name="plan_server_once"),
            models.UniqueConstraint(fields=["plan", "position"], name="plan_server_position"),
        ]

    def __str__(self) -> str:
        return f"{self.plan} → {self.target}"


class LaunchedBy(models.TextChoices):
    UI = "ui"
    API = "api"
    SCHEDULE = "schedule"
    IMPORT = "import"
    CLI = "cli"
    CONFIRM = "confirm"


class Batch(models.Model):
    """One execution of a plan, with a frozen copy of its parameters."""

    plan = models.ForeignKey(
        Plan,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="batches",
        help_text="Empty for imported logs.",
    )
    label = models.CharField(max_length=200, blank=True)
    target = models.ForeignKey(
        Target, on_delete=models.PROTECT, null=True, blank=True, related_name="batches"
    )
    load_host = models.ForeignKey(
        LoadHost, on_delete=models.PROTECT, null=True, blank=True, related_name="batches"
    )
    params = models.JSONField(help_text="Frozen copy of the plan's parameters at launch.")
    seed = models.BigIntegerField(help_text="Seed of the interleaved order.")
    status = _status_field()
    launched_by = models.CharField(max_length=10, choices=LaunchedBy.choices)
    launched_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=255, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    original_settings = models.JSONField(
        null=True, blank=True, help_text="Server settings before the first change."
    )
    settings_restored_at = models.DateTimeField(null=True, blank=True)
    put_back = models.JSONField(
        default=dict,
        blank=True,
        help_text="Per target id: what benchdash changed on it that must be put back (its "
        "original settings and config, the install running), read by the sweeper after a "
        "crash.",
    )
    warnings = models.JSONField(default=list, blank=True)
    stages = models.JSONField(default=list, blank=True, help_text="prepare and cleanup records.")
    error = models.TextField(blank=True)
    analysis = models.JSONField(
        default=dict, blank=True, help_text="Regression check against earlier nights, per cell."
    )
    notified = models.JSONField(default=list, blank=True, help_text="Notifications sent.")
    waiting_for = models.CharField(
        max_length=300, blank=True, help_text="What a waiting batch waits for."
    )
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    night = models.JSONField(
        default=dict,
        blank=True,
        help_text="This batch's figures per cell as history reads them (the median of each "
        "cell's repeats), stored as it ends, so a plan's history reads one row a night.",
    )
    notes = models.TextField(blank=True, help_text="What the team knows of this batch.")
    tags = models.JSONField(default=list, blank=True, help_text='Short labels, e.g. ["upgrade"].')

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "batches"
        constraints = [_status_constraint("batch_status_valid")]
        indexes = [models.Index(fields=["plan", "-created_at"], name="batch_plan_night")]

    def __str__(self) -> str:
        return f"batch {self.pk} of {self.plan or self.label or 'an imported log'}"


class Run(models.Model):
    """One cell of the matrix, one repeat."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="runs")
    position = models.PositiveIntegerField(help_text="Order of execution in the batch.")
    round = models.PositiveIntegerField(help_text="Repeat number, from 0.")
    cell_key = models.CharField(max_length=500, help_text="Identity of the cell across repeats.")
    threads = models.PositiveIntegerField(help_text="The cell's threads: their one record.")
    target = models.ForeignKey(
        Target,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The server this run measured; empty on older rows: the batch's target.",
    )
    test = models.CharField(
        max_length=64, blank=True, help_text="The run's test; empty on older rows: the plan's."
    )
    install = models.CharField(
        max_length=100, blank=True, help_text="The server install (version) of a versions axis."
    )
    config = models.CharField(
        max_length=100, blank=True, help_text="The label of the config file of a configs axis."
    )
    settings = models.JSONField(default=dict, blank=True, help_text="Server settings requested.")
    options = models.JSONField(
        default=dict, blank=True, help_text="sysbench options of the cell, its threads aside."
    )
    status = _status_field()
    verified_settings = models.JSONField(
        default=dict, blank=True, help_text="Server settings read back before the run."
    )
    argv = models.JSONField(default=list, blank=True, help_text="The command, without secrets.")
    summary = models.JSONField(default=dict, blank=True)
    reports = models.JSONField(default=list, blank=True, help_text="Checkpoint and final reports.")
    histogram = models.JSONField(default=list, blank=True)
    outcome = models.CharField(max_length=20, blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    error_kind = models.CharField(max_length=40, blank=True)
    error = models.TextField(blank=True, help_text="What went wrong, in sysbench's words.")
    error_hint = models.TextField(blank=True)
    raw_log = models.TextField(blank=True)
    pgid = models.IntegerField(null=True, blank=True, help_text="sysbench's process group.")
    expected_duration_s = models.FloatField(
        null=True, blank=True, help_text="How long sysbench should run; the timeout counts from it."
    )
    counters = models.JSONField(
        default=dict, blank=True, help_text="Server counter deltas over the run, and ratios."
    )
    environment = models.JSONField(
        default=dict,
        blank=True,
        help_text="The server variables that differ from the batch's snapshot once this "
        "run's settings were applied.",
    )
    warnings = models.JSONField(
        default=list, blank=True, help_text="What the user should know about this run."
    )
    reason = models.CharField(
        max_length=300,
        blank=True,
        help_text="Why an auto mode added this run; empty for the runs of the plan's matrix.",
    )
    host_summary = models.JSONField(
        default=dict,
        blank=True,
        help_text="What each machine did over the run's steady state, per host: CPU %, "
        "iowait %, IOPS, MB/s, context switches and server CPU per transaction; or why a "
        "host's figures are missing.",
    )
    bottleneck = models.JSONField(
        default=dict,
        blank=True,
        help_text="What limited this run (load host CPU, server CPU, I/O, fsync, waiting, "
        "network), with its evidence.",
    )
    config_dir = models.CharField(
        max_length=500,
        blank=True,
        help_text="sysbench's private directory on the load host while it runs: its config "
        "file holds the target's password, so it is removed on every path.",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["batch", "position"]
        constraints = [
            _status_constraint("run_status_valid"),
            models.UniqueConstraint(fields=["batch", "position"], name="run_unique_position"),
            models.CheckConstraint(condition=Q(threads__gte=1), name="run_threads_positive"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.label})"

    @property
    def label(self) -> str:
        parts = [f"{name}={value}" for name, value in self.servers.items()]
        parts += [f"threads={self.threads}"]
        parts += [f"{k}={v}" for k, v in sorted(self.settings.items())]
        return " ".join(parts)

    @property
    def servers(self) -> dict[str, str]:
        """The install and config this run's server ran with, where the plan's servers axis
        had those."""
        values = {"install": self.install, "config": self.config}
        return {name: value for name, value in values.items() if value}

    @property
    def duration_s(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None

    @property
    def sysbench_options(self) -> dict[str, Any]:
        """The options sysbench is given for this run: the cell's, with its threads (the
        threads column is their one record; `options` never holds them)."""
        return {**self.options, "threads": self.threads}


class Sample(models.Model):
    """One interval line of a run."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="samples")
    seq = models.PositiveIntegerField(help_text="Per-run sequence number, from 1.")
    time_s = models.FloatField()
    threads = models.PositiveIntegerField()
    tps = models.FloatField(null=True)
    qps = models.FloatField(null=True)
    reads = models.FloatField(null=True)
    writes = models.FloatField(null=True)
    other = models.FloatField(null=True)
    latency_pct = models.FloatField(null=True, help_text="The percentile of latency_ms.")
    latency_ms = models.FloatField(null=True)
    errors_per_s = models.FloatField(null=True)
    reconnects_per_s = models.FloatField(null=True)
    queue_length = models.IntegerField(null=True, help_text="--rate mode only.")
    concurrency = models.IntegerField(null=True, help_text="--rate mode only.")
    in_warmup = models.BooleanField(default=False)
    extra: models.JSONField[Any, Any] = models.JSONField(default=dict, blank=True)
    received_at = models.DateTimeField()

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="sample_unique_seq")]

    def __str__(self) -> str:
        return f"[{self.time_s:g}s] tps {self.tps}"


# The figures of a sample, in the order exports and live events give them.
SAMPLE_FIGURES = (
    "seq",
    "time_s",
    "threads",
    "tps",
    "qps",
    "reads",
    "writes",
    "other",
    "latency_pct",
    "latency_ms",
    "errors_per_s",
    "reconnects_per_s",
    "queue_length",
    "concurrency",
    "in_warmup",
)
# A sample's figures as a tuple in that order, in one call (the worker's hot path).
sample_figures = operator.attrgetter(*SAMPLE_FIGURES)


class RunHost(models.Model):
    """One load host's part of a cell driven from several load hosts at once."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="hosts")
    index = models.PositiveIntegerField(help_text="The host's place in the plan, from 0.")
    load_host = models.ForeignKey(LoadHost, on_delete=models.PROTECT, related_name="+")
    threads = models.PositiveIntegerField()
    rate = models.PositiveIntegerField(null=True, blank=True, help_text="Its --rate share.")
    status = _status_field()
    ready_at = models.DateTimeField(null=True, blank=True, help_text="Connected and staged.")
    started_at = models.DateTimeField(null=True, blank=True, help_text="sysbench started.")
    finished_at = models.DateTimeField(null=True, blank=True)
    pgid = models.IntegerField(null=True, blank=True)
    config_dir = models.CharField(max_length=500, blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    histogram = models.JSONField(default=list, blank=True)
    error_kind = models.CharField(max_length=40, blank=True)
    error = models.TextField(blank=True)
    raw_log = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            _status_constraint("runhost_status_valid"),
            models.UniqueConstraint(fields=["run", "index"], name="runhost_unique_index"),
        ]

    def __str__(self) -> str:
        return f"{self.load_host_id} in run {self.run_id}"


class HostSample(models.Model):
    """One interval line of one load host of a cell driven from several hosts (the cell's
    own samples, summed over the hosts, are Sample rows)."""

    run_host = models.ForeignKey(RunHost, on_delete=models.CASCADE, related_name="samples")
    seq = models.PositiveIntegerField()
    time_s = models.FloatField()
    threads = models.PositiveIntegerField()
    tps = models.FloatField(null=True)
    qps = models.FloatField(null=True)
    latency_ms = models.FloatField(null=True)
    errors_per_s = models.FloatField(null=True)

    class Meta:
        ordering = ["run_host", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["run_host", "seq"], name="hostsample_unique_seq")
        ]

    def __str__(self) -> str:
        return f"[{self.time_s:g}s] tps {self.tps} on host {self.run_host_id}"


class CounterSample(models.Model):
    """The server's status counters, read once per report interval while a run goes."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="counter_samples")
    seq = models.PositiveIntegerField()
    time_s = models.FloatField(help_text="Seconds since sysbench started, like Sample.time_s.")
    values = models.JSONField(help_text="Counter name → cumulative value as the server reports.")

    class Meta:
        ordering = ["run", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["run", "seq"], name="countersample_unique_seq")
        ]

    def __str__(self) -> str:
        return f"counters of run {self.run_id} at {self.time_s:g}s"


class HostMetrics(models.Model):
    """What one machine did during one interval of a run, read from /proc on sysbench's
    interval clock: the target's server host and each load host of the cell."""

    class Role(models.TextChoices):
        SERVER = "server"
        LOAD = "load"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="host_metrics")
    role = models.CharField(max_length=6, choices=Role.choices)
    host = models.CharField(max_length=100, help_text="The machine's name in benchdash.")
    seq = models.PositiveIntegerField()
    time_s = models.FloatField(help_text="Seconds since sysbench started, like Sample.time_s.")
    values = models.JSONField(
        help_text="Rates over the interval: cpu (user, system, iowait, steal, idle %), per "
        "core, run queue, context switches and interrupts per second, per disk IOPS, MB/s, "
        "await and utilisation, per interface KB/s, memory, and the database process's own "
        "CPU and context switches (server host only)."
    )

    class Meta:
        ordering = ["run", "role", "host", "seq"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "role", "host", "seq"], name="hostmetrics_unique_seq"
            ),
            models.CheckConstraint(
                condition=Q(role__in=["server", "load"]), name="hostmetrics_role_valid"
            ),
        ]
        verbose_name_plural = "host metrics"

    def __str__(self) -> str:
        return f"{self.role} {self.host} of run {self.run_id} at {self.time_s:g}s"


class StoredResults(models.Model):
    """A finished batch's answer, computed once and served as it is: what the results page,
    the API, the compare page and the report render. `key` names the view of it (the
    baseline chosen); a change to what feeds it (a baseline chosen, an import) replaces it."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="stored_results")
    key = models.CharField(max_length=200, help_text='The view stored, e.g. "baseline=0".')
    content = models.JSONField()
    etag = models.CharField(max_length=64, help_text="A digest of the content, for ETag.")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["batch", "key"], name="storedresults_unique_key")
        ]

    def __str__(self) -> str:
        return f"answer of batch {self.batch_id} ({self.key})"


class Alert(models.Model):
    """A night that looked slower, from the suspicion to what the team made of it: confirmed
    by a re-run (or recorded as noise), then acknowledged, dismissed as noise, or accepted as
    the new baseline."""

    class State(models.TextChoices):
        CONFIRMING = "confirming"  # the flagged cells are being run again
        CONFIRMED = "confirmed"  # the re-run agreed: the team was told
        NOISE = "noise"  # the re-run did not agree: recorded, nobody alerted
        ACKNOWLEDGED = "acknowledged"  # someone is on it
        DISMISSED = "dismissed"  # a person judged it noise
        ACCEPTED = "accepted"  # the new normal: history before it no longer judges after

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="alerts")
    batch = models.ForeignKey(
        Batch, on_delete=models.CASCADE, related_name="alerts", help_text="The flagged night."
    )
    confirmation = models.ForeignKey(
        Batch,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="confirms",
        help_text="The batch that ran the flagged cells again.",
    )
    state = models.CharField(max_length=12, choices=State.choices, default=State.CONFIRMING)
    cells = models.JSONField(default=list, blank=True, help_text="The flagged cells, with steps.")
    changes = models.JSONField(
        default=list, blank=True, help_text="What differs from the baseline nights."
    )
    verdict = models.TextField(blank=True, help_text="What the confirmation found, in words.")
    comment = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    state__in=[
                        "confirming",
                        "confirmed",
                        "noise",
                        "acknowledged",
                        "dismissed",
                        "accepted",
                    ]
                ),
                name="alert_state_valid",
            )
        ]

    def __str__(self) -> str:
        return f"alert on batch {self.batch_id} ({self.state})"


class Annotation(models.Model):
    """A mark on a plan's history timeline, e.g. "upgraded to 10.11.9"."""

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="annotations")
    at = models.DateTimeField(help_text="Where on the timeline it stands.")
    text = models.CharField(max_length=500)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["plan", "at"]

    def __str__(self) -> str:
        return f"{self.text} ({self.at:%Y-%m-%d})"


class ResourceLock(models.Model):
    """One benchmark per server and per load host: a row per resource a batch holds.

    The unique resource name makes the database refuse a second holder."""

    resource = models.CharField(max_length=100, unique=True, help_text="target:ID or loadhost:ID")
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="locks")
    acquired_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.resource} held by batch {self.batch_id}"


class ApiToken(AbstractAuthToken):
    """An API token for scripts: knox's hashed token, with a name its owner gave it."""

    name = models.CharField(max_length=100, blank=True)

    def __str__(self) -> str:
        return f"{self.name or 'token'} ({self.token_key}…)"
