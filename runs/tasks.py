"""Celery tasks: thin entry points that take ids and call one service each."""

from __future__ import annotations

import socket
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from runs import execution, services


@shared_task(name="runs.tasks.batch_execute", ignore_result=True)
def batch_execute(batch_id: int) -> None:
    execution.batch_execute(batch_id=batch_id, worker=f"benchdash@{socket.gethostname()}")


@shared_task(name="runs.tasks.sweep_stale", ignore_result=True)
def sweep_stale() -> list[int]:
    return services.batches_sweep_stale(hostname=socket.gethostname())


@worker_ready.connect
def _sweep_at_start(**_: Any) -> None:
    # A worker that comes back after a crash recovers what its predecessor left running.
    sweep_stale.delay()
