"""Batches: launching a plan, running a batch on a worker, cancelling one.

What a plan would run is checked in runs/services/plans.py, and a batch is executed
in runs/execution/runner.py; this module decides what runs and hands on what follows.
"""

from __future__ import annotations

import logging
import secrets
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from runs import targets
from runs.analysis.auto import settings as auto_settings
from runs.execution import locks, runner
from runs.execution.multihost import host_driver
from runs.execution.stream import cancel
from runs.frozen import FrozenPlan
from runs.models import Batch, LaunchedBy, Plan, Run, Status
from runs.services import put_back, queue
from runs.services.answers import stored_results
from runs.services.nightly import check as nightly_check
from runs.services.plan_axes import plan_all_targets
from runs.services.plans import PlanCheck, plan_check
from runs.services.queue import BrokerUnavailable, enqueue_batch, enqueue_or_log
from runs.sysbench.command import expected_duration_s

logger = logging.getLogger(__name__)

MAX_SEED = 2**63 - 1  # a seed is stored in a bigint


@transaction.atomic
def batch_launch(
    *,
    plan: Plan,
    launched_by: str = LaunchedBy.UI,
    user: AbstractBaseUser | None = None,
    seed: int | None = None,
) -> Batch:
    """Freeze the plan into a batch of queued runs and hand it to a worker once committed.
    The order's seed: the launch's, else the plan's, else a new one; recorded on the batch,
    so that the same seed replays the same order.

    When the task queue cannot be reached, the batch is failed at once (no row is left
    queued with no message behind it) and BrokerUnavailable is raised when the outermost
    transaction commits."""
    seed = _launch_seed(seed, plan.seed)
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
            target_id=cell.target if cell.target is not None else plan.target_id,
            test=cell.test,
            install=cell.install,
            config=cell.config,
            settings=cell.settings,
            options=cell.run_options,
            expected_duration_s=expected_duration_s(cell.options),
        )
        for cell in check.cells
    )
    _wait_if_busy(batch)
    transaction.on_commit(partial(_hand_over, batch.pk))
    return batch


@transaction.atomic
def batch_launch_cells(
    *, plan: Plan, params: dict[str, Any], seed: int, cells: list[Run], launched_by: str
) -> Batch:
    """A batch of given runs (unsaved Run rows: position, round and the cell's parameters)
    under frozen `params`, not the plan's whole matrix: the confirmation of a night's
    flagged cells (runs/services/nightly/alerts.py). Handed to a worker once committed."""
    batch = Batch.objects.create(
        plan=plan,
        target=plan.target,
        load_host=plan.load_host,
        params=params,
        seed=seed,
        launched_by=launched_by,
    )
    for run in cells:
        run.batch = batch
    Run.objects.bulk_create(cells)
    _wait_if_busy(batch)
    transaction.on_commit(partial(_hand_over, batch.pk))
    return batch


def _wait_if_busy(batch: Batch) -> None:
    """Another batch holds the target or a load host: this one waits, saying for what (the
    worker's claim waits the same way; the holder's end wakes it)."""
    waiting_for = locks.locks_holder(batch=batch)
    if waiting_for:
        batch.status, batch.waiting_for = Status.WAITING, waiting_for
        batch.save(update_fields=["status", "waiting_for"])


def _hand_over(batch_id: int) -> None:
    try:
        enqueue_batch(batch_id)
    except BrokerUnavailable as e:
        now = timezone.now()
        logger.error("batch %s not launched: %s", batch_id, e)
        not_started = [Status.QUEUED, Status.WAITING]
        if Batch.objects.filter(pk=batch_id, status__in=not_started).update(
            status=Status.FAILED, error=f"not launched: {e}", finished_at=now
        ):
            Run.objects.filter(batch_id=batch_id, status=Status.QUEUED).update(
                status=Status.SKIPPED, error="skipped: the batch could not be launched"
            )
        raise


def _launch_seed(given: int | None, planned: int | None) -> int:
    if given is not None:
        return given
    return planned if planned is not None else secrets.randbits(32)


def _frozen_params(plan: Plan, check: PlanCheck, seed: int) -> dict[str, Any]:
    return FrozenPlan(
        test=plan.test,
        options=check.options,
        threads=list(plan.threads),
        server_settings=check.settings,
        option_axes=dict(plan.option_axes),
        repeats=plan.repeats,
        auto=auto_settings.auto_stored(plan.auto),
        warmup_s=plan.warmup_s,
        order_policy=plan.order_policy,
        dataset_policy=plan.dataset_policy,
        cleanup=plan.cleanup,
        seed=seed,
        target=plan.target.describe() if plan.target else None,
        targets=_targets_axis(plan),
        tests=list(plan.tests),
        servers=dict(plan.servers),
        load_host=plan.load_host.name,
        extra_load_hosts=[h.pk for h in plan.extra_load_hosts.order_by("name")],
        load_split=plan.load_split,
        quiet_wait_s=plan.quiet_wait_s,
        # The script as it was at launch: what ran is recorded with the batch.
        script=check.script,
    ).to_params()


def _targets_axis(plan: Plan) -> list[dict[str, Any]]:
    targets = plan_all_targets(plan)
    if len(targets) < 2:
        return []
    return [{**target.describe(), "id": target.pk} for target in targets]


@transaction.atomic
def batch_cancel(*, batch: Batch, user: AbstractBaseUser | AnonymousUser | None = None) -> Batch:
    """Cancel a batch. One not yet started ends at once; a running one is stopped by its
    worker as soon as it hears of it (through Redis; at its next heartbeat without):
    sysbench killed, samples kept, the rest skipped, the data set cleaned up per the plan
    and the server's settings restored."""
    now = timezone.now()
    who = f" by {user.get_username()}" if user is not None and user.is_authenticated else ""
    not_started = Batch.objects.filter(pk=batch.pk, status__in=[Status.QUEUED, Status.WAITING])
    if not_started.update(status=Status.CANCELLED, cancel_requested_at=now, finished_at=now):
        batch.runs.filter(status=Status.QUEUED).update(
            status=Status.SKIPPED, error=f"skipped: the batch was cancelled{who}"
        )
        batch_release_locks(batch=batch)
        nightly_check.batch_finished(batch=batch)  # a cancelled nightly batch is news too
    else:
        running = Batch.objects.filter(pk=batch.pk, status__in=[Status.PREPARING, Status.RUNNING])
        if running.update(cancel_requested_at=now):
            cancel.publish_cancel(batch.pk)  # heard at once; the heartbeat is the fallback
    batch.refresh_from_db()
    stored_results.batch_results_store(batch=batch)  # a batch that never started is finished now
    return batch


def batch_execute(*, batch_id: int, worker: str) -> None:
    """Run a batch on this worker, then hand on what follows: the batches its locks held
    back, the batch itself when its worker is stopping, and a finished batch's news."""
    outcome = runner.batch_execute(
        batch_id=batch_id,
        worker=worker,
        dispatch=queue.enqueue_host_drives,
        put_back_first=put_back.left_put_back_before,
    )
    for waiter in outcome.woken:
        enqueue_batch(waiter)
    if outcome.requeue:
        enqueue_batch(batch_id)
    if outcome.finished:
        nightly_check.batch_finished(batch=Batch.objects.get(pk=batch_id))
        stored_results.batch_results_store(batch=Batch.objects.get(pk=batch_id))
    if outcome.error is not None:
        raise outcome.error


def host_drive(*, run_host_id: int) -> None:
    """One load host's part of a cell run from several hosts (a driver task)."""
    host_driver.host_drive(run_host_id=run_host_id)


def batch_release_locks(*, batch: Batch) -> None:
    """Free the batch's server and load host, and wake the batches that wait for them
    once this is committed."""
    for waiter in locks.locks_release(batch=batch):
        # The sweeper asks for waiting batches again: a broker that is down is only logged.
        transaction.on_commit(partial(enqueue_or_log, waiter))
