"""Celery tasks: thin entry points that take ids and call one service each."""

from __future__ import annotations

import gc
import socket
from typing import Any

from celery import Task, shared_task
from celery.signals import worker_ready, worker_shutdown, worker_shutting_down

from runs.execution import liveness, worker_limits
from runs.execution.stream.heartbeat import WORKER_STOPPING
from runs.models import Batch
from runs.services import batches, recovery, worker_watch
from runs.services.nightly import alerts, schedules


@shared_task(bind=True, name="runs.tasks.batch_execute", ignore_result=True)
def batch_execute(self: Task, batch_id: int) -> None:
    # The worker's node name (name@machine): several workers may share a machine.
    worker = self.request.hostname or f"benchdash@{socket.gethostname()}"
    with liveness.batch_running(batch_id):  # said by the worker's heartbeat
        batches.batch_execute(batch_id=batch_id, worker=worker)


@shared_task(name="runs.tasks.host_drive", ignore_result=True)
def host_drive(run_host_id: int) -> None:
    # One load host's part of a cell run from several hosts, on the `drivers` queue.
    batches.host_drive(run_host_id=run_host_id)


@shared_task(name="runs.tasks.sweep_stale", ignore_result=True)
def sweep_stale() -> list[int]:
    return recovery.batches_sweep_stale(hostname=socket.gethostname())


@shared_task(name="runs.tasks.watch_workers", ignore_result=True)
def watch_workers() -> list[int]:
    return worker_watch.batches_of_dead_workers(hostname=socket.gethostname())


@worker_ready.connect
def _sweep_at_start(**_: Any) -> None:
    WORKER_STOPPING.clear()  # a worker that starts is not stopping
    # What is loaded by now lives as long as the worker: spare the garbage collector from
    # walking it again and again (a full collection of it costs 50-90 ms of CPU, about
    # once per benchmark; see docs/PERFORMANCE.md).
    gc.collect()
    gc.freeze()
    # A worker that comes back after a crash recovers what its predecessor left running.
    sweep_stale.delay()


@worker_ready.connect
def _report_open_files(sender: Any = None, **_: Any) -> None:
    # sysbench on the local load host inherits this worker's open-file limit: the
    # editor's preflight checks it (runs/execution/worker_limits.py).
    if _consumes_benchmarks(sender):
        worker_limits.record_open_files(worker=sender.hostname)


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    # Beats in Redis whatever the worker does: the sweeper and the health page read it.
    if sender is not None:
        queues = getattr(getattr(sender, "task_consumer", None), "queues", None) or []
        liveness.WorkerHeartbeat.start(
            worker=sender.hostname, queues=[q.name for q in queues if not q.name.endswith(".dq")]
        )


@worker_shutdown.connect
def _stop_heartbeat(sender: Any = None, **_: Any) -> None:
    if sender is not None:
        liveness.WorkerHeartbeat.stop(worker=sender.hostname)


@worker_shutting_down.connect
def _forget_open_files(sender: Any = None, **_: Any) -> None:
    if sender is not None:
        worker_limits.forget_open_files(worker=str(sender))


def _consumes_benchmarks(consumer: Any) -> bool:
    queues = getattr(getattr(consumer, "task_consumer", None), "queues", None) or []
    return any(q.name == worker_limits.BENCHMARKS_QUEUE for q in queues)


@worker_shutting_down.connect
def _stop_benchmarks(**_: Any) -> None:
    # A warm shutdown would wait for the batch to end, hours later: stop its benchmark now
    # and hand the batch back to the queue instead.
    WORKER_STOPPING.set()


@shared_task(bind=True, name="runs.tasks.plan_launch_scheduled", ignore_result=True)
def plan_launch_scheduled(self: Task, plan_id: int) -> None:
    # Beat's fire: the same launch as a user's, or a skipped record while one is pending.
    fired_at = schedules.fired_at(self.request.expires)
    schedules.plan_launch_scheduled(plan_id=plan_id, fired_at=fired_at)


@shared_task(name="runs.tasks.batch_analyse", ignore_result=True)
def batch_analyse(batch_id: int) -> None:
    # After a scheduled batch: its regression check against earlier nights, the alert and
    # the news; after a batch launched to confirm, its alert's verdict.
    batch = Batch.objects.select_related("plan").filter(pk=batch_id).first()
    if batch is not None:
        alerts.batch_judge(batch=batch)
