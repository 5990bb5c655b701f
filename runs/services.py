"""Business logic that writes: checking and launching plans, and recovering from crashes.

The execution of a batch lives in runs/execution.py; this module decides what runs.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from runs import history, locks, matrix, targets
from runs.executors import ExecutorError, executor_for, kill_process_group
from runs.models import Batch, Engine, LaunchedBy, LoadHost, Plan, Run, Status, Target
from runs.sysbench.options import ValidationError, is_sql_test

logger = logging.getLogger(__name__)

DEFAULT_OPTIONS: dict[str, object] = {"report-interval": 1, "histogram": "on"}


@dataclass
class PlanCheck:
    """What a plan would run, and what the user should know before launching it."""

    cells: list[matrix.Cell]
    settings: dict[str, list[str]]
    options: dict[str, object]
    warnings: list[str] = field(default_factory=list)
    server: targets.ServerInfo | None = None

    @property
    def run_count(self) -> int:
        return len(self.cells)


def plan_options(plan: Plan) -> dict[str, object]:
    """The fixed options of a plan with benchdash's defaults and the warmup checkpoint."""
    options = {**DEFAULT_OPTIONS, **plan.options}
    if plan.warmup_s and "report-checkpoints" not in options:
        # sysbench 1.0 has no warmup option: a checkpoint report at W resets the counters,
        # so the final report covers only the steady state after the warmup.
        options["report-checkpoints"] = str(plan.warmup_s)
    return options


def plan_check(*, plan: Plan, seed: int = 0, contact_server: bool = True) -> PlanCheck:
    """Validate a plan completely; raises ValidationError naming the field at fault.

    With contact_server, the target is asked for its variables: a thread count above
    max_connections is refused, and a sync_binlog axis without binary logging is a warning.
    """
    _check_target_fits(plan)
    _check_script_host(plan)
    server_settings = _validate_settings(plan)
    options = plan_options(plan)
    cells = matrix.expand(
        test=plan.test,
        fixed_options=options,
        axes=matrix.Axes(
            threads=list(plan.threads),
            server_settings=server_settings,
            options=dict(plan.option_axes),
        ),
        repeats=plan.repeats,
        order=plan.order_policy,
        seed=seed,
        # With existing tables the cells still group by data set; nothing is prepared.
        dataset_policy="fresh" if plan.dataset_policy == "fresh" else "shared",
    )
    check = PlanCheck(cells=cells, settings=server_settings, options=options)
    if contact_server and plan.target is not None:
        check.server = target_inspect(target=plan.target)
        max_threads = max(c.threads for c in cells)
        check.warnings = server_warnings(check.server, server_settings, max_threads)
    return check


def _check_script_host(plan: Plan) -> None:
    # A custom Lua script is arbitrary code: never on the worker's machine, next to the
    # worker's secrets (its database passwords, the encryption keys).
    if plan.script_id is not None and plan.load_host.kind != LoadHost.Kind.SSH:
        raise ValidationError(
            "load_host",
            "custom Lua scripts run on SSH load hosts only, not on the local host, which "
            "shares the worker's secrets",
        )


def _check_target_fits(plan: Plan) -> None:
    if is_sql_test(plan.test):
        if plan.target is None:
            raise ValidationError("target", f"{plan.test} is a database test: choose a target")
        target_validate(target=plan.target)


def _validate_settings(plan: Plan) -> dict[str, list[str]]:
    if not plan.server_settings:
        return {}
    if plan.target is None:
        raise ValidationError("server_settings", "server settings need a target")
    if _on_results_server(plan.target):
        raise ValidationError(
            "server_settings",
            "this PostgreSQL server holds benchdash's own results: its settings are never "
            "changed; benchmark another server",
        )
    return targets.validate_settings(plan.target.engine, plan.server_settings)


def _on_results_server(target: Target) -> bool:
    """Whether the target is the PostgreSQL server of the results store (ALTER SYSTEM
    there would change benchdash's own database server)."""
    store = settings.DATABASES["default"]
    return (
        target.engine == Engine.POSTGRESQL
        and target.host in {store["HOST"], "localhost", "127.0.0.1"}
        and str(target.port or 5432) == str(store["PORT"] or 5432)
    )


def target_validate(*, target: Target) -> None:
    """Refuse targets whose database benchdash must never prepare or clean up."""
    targets.check_database_name(target.database, target.engine)
    store = settings.DATABASES["default"]
    same_store = (
        target.engine == Engine.POSTGRESQL
        and target.database == store["NAME"]
        and target.host in {store["HOST"], "localhost", "127.0.0.1"}
        and str(target.port or 5432) == str(store["PORT"] or 5432)
    )
    if same_store:
        raise ValidationError("database", "this is benchdash's own results database")


def target_inspect(*, target: Target) -> targets.ServerInfo:
    with targets.connect(target.connection(), timeout=settings.BENCHDASH_TARGET_TIMEOUT) as db:
        return db.server_info()


@dataclass(frozen=True)
class ConnectionCheck:
    """What "test connection" tells about a target; `error` set when it failed."""

    ok: bool
    version: str = ""
    may_change_settings: bool | None = None
    privileges: str = ""
    log_bin: bool | None = None
    max_connections: int | None = None
    error: str = ""
    hint: str = ""


def target_test_connection(*, target: Target) -> ConnectionCheck:
    """Log in to the target and read what a benchmark depends on. Changes nothing."""
    try:
        with targets.connect(target.connection(), timeout=settings.BENCHDASH_TARGET_TIMEOUT) as db:
            info = db.server_info()
            may, privileges = db.may_change_settings()
    except targets.TargetError as e:
        return ConnectionCheck(ok=False, error=e.message, hint=e.hint)
    return ConnectionCheck(
        ok=True,
        version=info.version,
        may_change_settings=may,
        privileges=privileges,
        log_bin=info.log_bin if target.engine != Engine.POSTGRESQL else None,
        max_connections=info.max_connections,
    )


def server_warnings(
    server: targets.ServerInfo, server_settings: dict[str, list[str]], max_threads: int
) -> list[str]:
    """Warnings for the user, and a refusal when threads exceed max_connections."""
    allowed = min(
        [server.max_connections, *(int(v) for v in server_settings.get("max_connections", []))]
    )
    # benchdash holds one connection of its own while sysbench runs.
    if max_threads + 1 > allowed:
        raise ValidationError(
            "threads",
            f"threads={max_threads} needs {max_threads + 1} connections (one per sysbench "
            f"thread, one for benchdash) but max_connections is {allowed}; raise "
            "max_connections on the server or use fewer threads",
        )
    warnings = _superuser_warnings(server, server_settings)
    if "sync_binlog" in server_settings and not server.log_bin:
        warnings.append("sync_binlog has no effect: binary logging is off (log_bin=OFF)")
    return warnings


def _superuser_warnings(
    server: targets.ServerInfo, server_settings: dict[str, list[str]]
) -> list[str]:
    """PostgreSQL changes settings with ALTER SYSTEM: a superuser's privilege, which
    PostgreSQL 15 and later can also grant per setting."""
    if not server_settings or server.variables.get("is_superuser") != "off":
        return []
    names = ", ".join(sorted(server_settings))
    if int(server.variables.get("server_version_num", "0") or 0) < 150000:
        raise ValidationError(
            "server_settings",
            f"the target's PostgreSQL account is not a superuser: it cannot change {names} "
            "with ALTER SYSTEM; connect the target as a superuser",
        )
    return [
        f"the target's PostgreSQL account is not a superuser: changing {names} needs "
        "GRANT ALTER SYSTEM ON PARAMETER for each of them"
    ]


@transaction.atomic
def batch_launch(
    *, plan: Plan, launched_by: str = LaunchedBy.UI, user: AbstractBaseUser | None = None
) -> Batch:
    """Freeze the plan into a batch of queued runs and hand it to a worker."""
    seed = secrets.randbits(32)
    try:
        check = plan_check(plan=plan, seed=seed)
    except targets.TargetError as e:
        # An unreachable target does not stop a launch (a nightly run must leave a record):
        # the worker checks again and fails the batch with the server's own words.
        check = plan_check(plan=plan, seed=seed, contact_server=False)
        check.warnings.append(f"the target could not be checked at launch: {e.message}")
    batch = Batch.objects.create(
        plan=plan,
        target=plan.target,
        load_host=plan.load_host,
        params=_frozen_params(plan, check, seed),
        seed=seed,
        launched_by=launched_by,
        launched_by_user=user if isinstance(user, User) else None,
        warnings=check.warnings,
    )
    Run.objects.bulk_create(
        Run(
            batch=batch,
            position=cell.position,
            round=cell.round,
            cell_key=cell.key(),
            threads=cell.threads,
            settings=cell.settings,
            options=cell.options,
            expected_duration_s=expected_duration_s(cell.options),
        )
        for cell in check.cells
    )
    transaction.on_commit(lambda: enqueue_batch(batch.pk))
    return batch


def expected_duration_s(options: dict[str, Any]) -> float | None:
    """How long sysbench should run: --time (10 s by default), unless it counts events."""
    time_s = float(options.get("time", 10))
    if time_s == 0:
        return None  # bounded by --events: no duration to expect
    return time_s


def _frozen_params(plan: Plan, check: PlanCheck, seed: int) -> dict[str, Any]:
    return {
        "test": plan.test,
        "options": check.options,
        "threads": list(plan.threads),
        "server_settings": check.settings,
        "option_axes": dict(plan.option_axes),
        "repeats": plan.repeats,
        "warmup_s": plan.warmup_s,
        "order_policy": plan.order_policy,
        "dataset_policy": plan.dataset_policy,
        "cleanup": plan.cleanup,
        "seed": seed,
        "target": plan.target.describe() if plan.target else None,
        "load_host": plan.load_host.name,
        # The script as it was at launch: what ran is recorded with the batch.
        "script": {"name": plan.script.name, "content": plan.script.content}
        if plan.script
        else None,
    }


def enqueue_batch(batch_id: int) -> None:
    """Hand a batch to a worker; redelivery is harmless, the claim is conditional."""
    from runs.tasks import batch_execute

    batch_execute.delay(batch_id)


def batches_sweep_stale(*, hostname: str) -> list[int]:
    """Recover batches whose worker died: the sweeper of the heartbeat protocol.

    A batch that has not beaten for BENCHDASH_STALE_AFTER_SECONDS lost its worker. Its
    running run is marked interrupted (its samples stay), the orphaned sysbench is killed,
    the server's original settings are restored, and the batch is queued again to go on
    from its next unfinished cell: the interrupted cell is never run twice.
    """
    cutoff = timezone.now() - timedelta(seconds=settings.BENCHDASH_STALE_AFTER_SECONDS)
    recovered = []
    stale_ids = list(
        Batch.objects.filter(
            status__in=[Status.PREPARING, Status.RUNNING], heartbeat_at__lt=cutoff
        ).values_list("pk", flat=True)
    )
    for batch_id in stale_ids:
        if _recover(batch_id, cutoff, hostname):
            recovered.append(batch_id)
    # A waiting batch is woken when its lock is released; asking again now and then costs
    # one conditional update and covers a wake-up lost with a crashed worker.
    for batch_id in Batch.objects.filter(status=Status.WAITING).values_list("pk", flat=True):
        enqueue_batch(batch_id)
    return recovered


@transaction.atomic
def _recover(batch_id: int, cutoff: Any, hostname: str) -> bool:
    batch = (
        Batch.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(pk=batch_id, status__in=[Status.PREPARING, Status.RUNNING], heartbeat_at__lt=cutoff)
        .select_related("target")
        .first()
    )
    if batch is None:
        return False
    now = timezone.now()
    for run in batch.runs.filter(status__in=[Status.PREPARING, Status.RUNNING]):
        _kill_orphan(batch, run, hostname)
        run.status = Status.INTERRUPTED
        run.finished_at = now
        run.error = (
            f"the worker {batch.worker} stopped beating at {batch.heartbeat_at:%H:%M:%S} UTC; "
            "the samples received until then are kept"
        )
        run.save(update_fields=["status", "finished_at", "error"])
    batch_restore_settings(batch=batch)
    locks.locks_release(batch=batch)
    batch.status = Status.QUEUED
    batch.warnings = [
        *batch.warnings,
        f"resumed after the worker {batch.worker} died at {now:%Y-%m-%d %H:%M:%S} UTC",
    ]
    batch.save(update_fields=["status", "warnings"])
    logger.warning("batch %s: worker %s is gone, requeued", batch.pk, batch.worker)
    transaction.on_commit(lambda: enqueue_batch(batch.pk))
    return True


def _kill_orphan(batch: Batch, run: Run, hostname: str) -> None:
    if run.pgid is None:
        return
    if batch.load_host is not None and batch.load_host.kind == LoadHost.Kind.SSH:
        _kill_remote_orphan(batch, batch.load_host, run.pgid)
        return
    # A local sysbench lives on the machine of the worker that started it.
    if batch.worker.split("@")[-1] == hostname:
        if kill_process_group(run.pgid):
            logger.warning("batch %s: killed orphaned sysbench group %s", batch.pk, run.pgid)
    else:
        logger.error(
            "batch %s: sysbench group %s is on %s, not here (%s): cannot kill it",
            batch.pk,
            run.pgid,
            batch.worker,
            hostname,
        )


def _kill_remote_orphan(batch: Batch, load_host: LoadHost, pgid: int) -> None:
    """Any worker can reach a remote sysbench: over a new SSH connection, its group is
    killed if its leader is still sysbench."""
    try:
        killed = executor_for(load_host).kill_group(pgid)
    except ExecutorError as e:
        logger.error("batch %s: cannot kill sysbench group %s: %s", batch.pk, pgid, e)
        return
    if killed:
        logger.warning(
            "batch %s: killed orphaned sysbench group %s on %s", batch.pk, pgid, load_host.name
        )


def batch_restore_settings(*, batch: Batch) -> None:
    """Put the server's original settings back. Safe to call more than once."""
    if not batch.original_settings or batch.target is None:
        return
    with targets.connect(
        batch.target.connection(), timeout=settings.BENCHDASH_TARGET_TIMEOUT
    ) as db:
        db.restore(batch.original_settings)
    batch.settings_restored_at = timezone.now()
    batch.save(update_fields=["settings_restored_at"])


@transaction.atomic
def batch_cancel(*, batch: Batch, user: AbstractBaseUser | AnonymousUser | None = None) -> Batch:
    """Cancel a batch. One not yet started ends at once; a running one is stopped by its
    worker within a second: sysbench killed, samples kept, the rest skipped, the data set
    cleaned up per the plan and the server's settings restored."""
    now = timezone.now()
    who = f" by {user.get_username()}" if user is not None and user.is_authenticated else ""
    not_started = Batch.objects.filter(pk=batch.pk, status__in=[Status.QUEUED, Status.WAITING])
    if not_started.update(status=Status.CANCELLED, cancel_requested_at=now, finished_at=now):
        batch.runs.filter(status=Status.QUEUED).update(
            status=Status.SKIPPED, error=f"skipped: the batch was cancelled{who}"
        )
        locks.locks_release(batch=batch)
        history.batch_finished(batch=batch)  # a cancelled nightly batch is news too
    else:
        Batch.objects.filter(pk=batch.pk, status__in=[Status.PREPARING, Status.RUNNING]).update(
            cancel_requested_at=now
        )
    batch.refresh_from_db()
    return batch
