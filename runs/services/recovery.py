"""Recovering from crashed workers: the sweeper of the heartbeat protocol."""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from runs.execution import liveness
from runs.execution.environment import batch_restore_settings
from runs.execution.multihost.barrier import CellBarrier
from runs.execution.outages import handover
from runs.execution.restarts.leftovers import restarted_put_back
from runs.execution.run_results import run_fail
from runs.execution.stream.sample_writes import run_store_recent_samples
from runs.loadhosts import ExecutorError, LocalExecutor, executor_for, kill_process_group
from runs.models import (
    Batch,
    LoadHost,
    Run,
    Status,
)
from runs.services.batches import batch_release_locks
from runs.services.put_back import (  # noqa: F401 (recovery's names, as before)
    batches_drop_left_datasets,
    batches_restore_left_settings,
    leftovers_put_back,
)
from runs.services.queue import enqueue_or_log
from runs.services.restarts import batches_put_back_left_servers
from runs.targets import TargetError

logger = logging.getLogger(__name__)


def batches_sweep_stale(*, hostname: str) -> list[int]:
    """Recover batches whose worker died: the sweeper of the heartbeat protocol.

    A batch that has not beaten for BENCHDASH_STALE_AFTER_SECONDS lost its worker. Its
    running run is marked interrupted (its samples stay: those its worker published but
    had not stored yet are taken from Redis), the orphaned sysbench is killed and its
    private directory, which holds the target's password, removed; the server's original
    settings are restored, and the batch is queued again to go on from its next
    unfinished cell: the interrupted cell is never run twice. A batch whose worker still
    beats in Redis (waiting, or cut off from the results database) is left to it.
    """
    cutoff = timezone.now() - timedelta(seconds=settings.BENCHDASH_STALE_AFTER_SECONDS)
    recovered = batches_end_given_up()
    stale_ids = list(
        Batch.objects.filter(
            status__in=[Status.PREPARING, Status.RUNNING], heartbeat_at__lt=cutoff
        ).values_list("pk", flat=True)
    )
    for batch_id in stale_ids:
        if batch_recover(batch_id, cutoff, hostname):
            recovered.append(batch_id)
    # A waiting batch is woken when its lock is released; asking again now and then costs
    # one conditional update and covers a wake-up lost with a crashed worker.
    for batch_id in Batch.objects.filter(status=Status.WAITING).values_list("pk", flat=True):
        enqueue_or_log(batch_id)
    resent = batches_requeue_lost()
    restored, dropped = leftovers_put_back()
    restored += batches_put_back_left_servers()
    liveness.process_beat(
        name=liveness.SWEEPER,
        report={
            "machine": hostname,
            "recovered": recovered,
            "resent": resent,
            "restored": restored,
            "dropped": dropped,
        },
    )
    return recovered


def batches_end_given_up() -> list[int]:
    """End the batches whose worker gave up on the results database (runs/execution/
    handover.py), once it is back: at once, they have no worker to wait for."""
    active = Batch.objects.filter(status__in=[Status.PREPARING, Status.RUNNING])
    return [pk for pk in active.values_list("pk", flat=True) if _end_given_up(pk)]


@transaction.atomic
def _end_given_up(batch_id: int) -> bool:
    """The batch ends failed, with the outage and its real length as its cause, as a
    worker that saw the database back ends it; its running cell keeps everything its
    worker held."""
    left = handover.handover_read(batch_id)
    batch = (
        Batch.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(pk=batch_id, status__in=[Status.PREPARING, Status.RUNNING])
        .select_related("target")
        .first()
    )
    if left is None or batch is None:
        return False
    started = datetime.fromisoformat(left.outage_started)
    cause = left.cause(*handover.results_db_back_at(started))
    for run in batch.runs.filter(status__in=[Status.PREPARING, Status.RUNNING]):
        _stop_host_parts(batch, run)
        if run.pk == left.run_id:
            handover.run_store_handover(run=run, left=left, cause=cause)
        else:
            run_store_recent_samples(run=run)
            run_fail(run, cause, "", "results_db")
    batch.runs.filter(status=Status.QUEUED).update(status=Status.SKIPPED, error=f"skipped: {cause}")
    if left.settings_restored_at is None:
        # The target away too: batches_restore_left_settings puts them back later.
        with contextlib.suppress(TargetError):
            batch_restore_settings(batch=batch)
    else:
        batch.settings_restored_at = datetime.fromisoformat(left.settings_restored_at)
    batch_release_locks(batch=batch)
    batch.status = Status.FAILED
    batch.error = cause
    batch.warnings = [*batch.warnings, *left.warnings]
    batch.finished_at = timezone.now()
    batch.save(update_fields=["status", "error", "warnings", "finished_at", "settings_restored_at"])
    logger.warning("batch %s: ended from its worker's handover: %s", batch.pk, cause)
    transaction.on_commit(partial(handover.handover_drop, batch.pk))
    return True


def batches_requeue_lost() -> list[int]:
    """Hand over again the batches still queued BENCHDASH_QUEUED_GRACE_SECONDS after
    their launch: their message was lost (Redis restarted without persistence, or a worker
    died holding it), and without this they would stay queued forever, and every later
    scheduled fire of their plan would be skipped. A batch whose message is only slow
    gets a second one: the claim is a conditional update, the second does nothing."""
    cutoff = timezone.now() - timedelta(seconds=settings.BENCHDASH_QUEUED_GRACE_SECONDS)
    # One that ran (its worker died or stopped) counts from its last heartbeat.
    queued = Batch.objects.filter(status=Status.QUEUED, created_at__lt=cutoff)
    lost = list(
        queued.exclude(heartbeat_at__gte=cutoff).values_list("pk", flat=True).order_by("pk")
    )
    for batch_id in lost:
        logger.info("batch %s still queued: handed to a worker again", batch_id)
        _warn_once(batch_id)
        enqueue_or_log(batch_id)
    return lost


RESENT = (
    "still queued {grace:g} s after its launch: its message to the workers was lost (a "
    "Redis restart, or a worker that died holding it); handed to a worker again at {now} UTC"
)
RESENT_AFTER_WORKER = (
    "its worker {worker} {ended} while it ran and no worker took it up in the {grace:g} s "
    "since; handed to a worker again at {now} UTC"
)


def _warn_once(batch_id: int) -> None:
    """The batch says it was handed over again, once however many sweeps did."""
    batch = Batch.objects.only("warnings", "started_at", "worker").get(pk=batch_id)
    if any("handed to a worker again" in w for w in batch.warnings):
        return
    warning = RESENT if batch.started_at is None else RESENT_AFTER_WORKER
    died = any(w.startswith("resumed after the worker") for w in batch.warnings)
    text = warning.format(
        grace=settings.BENCHDASH_QUEUED_GRACE_SECONDS,
        now=f"{timezone.now():%H:%M:%S}",
        worker=batch.worker,
        ended="died" if died else "stopped",
    )
    Batch.objects.filter(pk=batch_id).update(warnings=[*batch.warnings, text])


@transaction.atomic
def batch_recover(batch_id: int, cutoff: Any, hostname: str) -> bool:
    batch = (
        Batch.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(pk=batch_id, status__in=[Status.PREPARING, Status.RUNNING], heartbeat_at__lt=cutoff)
        .select_related("target")
        .first()
    )
    if batch is None:
        return False
    if liveness.worker_alive(worker=batch.worker, batch_id=batch.pk):
        logger.warning(
            "batch %s: heartbeat stale but worker %s is alive (%s); not requeued",
            batch.pk,
            batch.worker,
            batch.waiting_for or "running",
        )
        return False
    now = timezone.now()
    for run in batch.runs.filter(status__in=[Status.PREPARING, Status.RUNNING]):
        _kill_orphan(batch, run, hostname)
        _stop_host_parts(batch, run)
        if missing := run_store_recent_samples(run=run):
            logger.warning("run %s: %s samples stored from the live list", run.pk, missing)
        run.status = Status.INTERRUPTED
        run.finished_at = now
        run.error = (
            f"the worker {batch.worker} stopped beating at {batch.heartbeat_at:%H:%M:%S} UTC; "
            "the samples received until then are kept"
        )
        run.save(update_fields=["status", "finished_at", "error"])
    batch_remove_config_dirs(batch=batch, hostname=hostname)
    # A restart-only cell's server: its original config and install back (Batch.put_back).
    if problem := restarted_put_back(batch=batch, reason="the sweeper, after the worker died"):
        batch.warnings = [*batch.warnings, problem]
    batch_restore_settings(batch=batch)
    batch_release_locks(batch=batch)
    batch.status = Status.QUEUED
    batch.warnings = [
        *batch.warnings,
        f"resumed after the worker {batch.worker} died at {now:%Y-%m-%d %H:%M:%S} UTC",
    ]
    batch.save(update_fields=["status", "warnings"])
    logger.warning("batch %s: worker %s is gone, requeued", batch.pk, batch.worker)
    transaction.on_commit(partial(enqueue_or_log, batch.pk))
    return True


def batch_remove_config_dirs(*, batch: Batch, hostname: str) -> None:
    """Remove the private directories sysbench had when the batch's worker died: their
    config file holds the target's password. A run records its directory while it
    exists (prepare and cleanup record theirs on the first run of their group)."""
    for run in batch.runs.exclude(config_dir=""):
        try:
            removed = _remove_config_dir(batch, run.config_dir, hostname)
        except ExecutorError as e:
            logger.error("batch %s: cannot remove %s: %s", batch.pk, run.config_dir, e)
            continue
        if removed:
            logger.warning("batch %s: removed sysbench's directory %s", batch.pk, run.config_dir)
        Run.objects.filter(pk=run.pk).update(config_dir="")


def _remove_config_dir(batch: Batch, path: str, hostname: str) -> bool:
    load_host = batch.load_host
    if load_host is not None and load_host.kind == LoadHost.Kind.SSH:
        return executor_for(load_host).remove_config_dir(path)
    # A local directory lives on the machine of the worker that made it.
    if batch.worker.split("@")[-1] != hostname:
        raise ExecutorError(f"it is on {batch.worker}, not here ({hostname})")
    return LocalExecutor().remove_config_dir(path)


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


def _stop_host_parts(batch: Batch, run: Run) -> None:
    """A cell from several load hosts: its drivers are told to stop, and each host's
    sysbench is killed and its private directory removed, whatever became of its
    driver."""
    parts = list(run.hosts.select_related("load_host"))
    if not parts:
        return
    CellBarrier(run.pk, len(parts)).stop()
    for part in parts:
        if part.pgid is not None and part.status in (Status.PREPARING, Status.RUNNING):
            _kill_remote_orphan(batch, part.load_host, part.pgid)
        if part.config_dir:
            try:
                executor_for(part.load_host).remove_config_dir(part.config_dir)
            except ExecutorError as e:
                logger.error("batch %s: cannot remove %s: %s", batch.pk, part.config_dir, e)
    run.hosts.filter(status__in=[Status.QUEUED, Status.PREPARING, Status.RUNNING]).update(
        status=Status.INTERRUPTED, config_dir=""
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
