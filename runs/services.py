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
from django.contrib.auth.models import AbstractBaseUser, User
from django.db import transaction
from django.utils import timezone

from runs import matrix, targets
from runs.executors import kill_process_group
from runs.models import Batch, Engine, LaunchedBy, Plan, Run, Status, Target
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
    if contact_server and plan.target is not None and plan.target.engine != Engine.POSTGRESQL:
        check.server = target_inspect(target=plan.target)
        max_threads = max(c.threads for c in cells)
        check.warnings = server_warnings(check.server, server_settings, max_threads)
    return check


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
    if plan.target.engine == Engine.POSTGRESQL:
        raise ValidationError("server_settings", "PostgreSQL settings are not supported yet")
    return targets.validate_mysql_settings(plan.server_settings)


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
    warnings = []
    if "sync_binlog" in server_settings and not server.log_bin:
        warnings.append("sync_binlog has no effect: binary logging is off (log_bin=OFF)")
    return warnings


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
        )
        for cell in check.cells
    )
    transaction.on_commit(lambda: _enqueue(batch.pk))
    return batch


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
    }


def _enqueue(batch_id: int) -> None:
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
    batch.status = Status.QUEUED
    batch.warnings = [
        *batch.warnings,
        f"resumed after the worker {batch.worker} died at {now:%Y-%m-%d %H:%M:%S} UTC",
    ]
    batch.save(update_fields=["status", "warnings"])
    logger.warning("batch %s: worker %s is gone, requeued", batch.pk, batch.worker)
    transaction.on_commit(lambda: _enqueue(batch.pk))
    return True


def _kill_orphan(batch: Batch, run: Run, hostname: str) -> None:
    if run.pgid is None:
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
