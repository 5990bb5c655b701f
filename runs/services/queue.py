"""Handing work to the workers.

Services enqueue tasks by name through Celery's current app: the tasks module stands above
the services (a task is an entry point that calls a service), so the services never import
it, nor the project package that makes the app (benchdash/celery.py, loaded with Django,
whose Celery fix-up makes it every thread's default app, as `@shared_task` relies on too).
Callers inside a transaction enqueue with `transaction.on_commit`, so that a worker never
looks for a row that is not committed yet.
"""

from __future__ import annotations

import logging

from celery import current_app, group
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

BATCH_EXECUTE = "runs.tasks.batch_execute"
BATCH_ANALYSE = "runs.tasks.batch_analyse"
HOST_DRIVE = "runs.tasks.host_drive"


class BrokerUnavailable(Exception):
    """The task queue (Redis) could not be reached: nothing was handed to a worker."""

    def __init__(self, error: Exception) -> None:
        super().__init__(
            f"the task queue (Redis) cannot be reached ({error}); try again once it is back"
        )


def enqueue_batch(batch_id: int) -> None:
    """Hand a batch to a worker; redelivery is harmless, the claim is conditional.
    Raises BrokerUnavailable."""
    _send(BATCH_EXECUTE, batch_id)


def enqueue_analyse(batch_id: int) -> None:
    """The regression check and the news of a finished scheduled batch."""
    _send(BATCH_ANALYSE, batch_id)


def enqueue_or_log(batch_id: int) -> None:
    """For hand-overs the sweeper repeats anyway (waking a waiting batch): a broker that
    is down is logged, not raised."""
    try:
        enqueue_batch(batch_id)
    except BrokerUnavailable as e:
        logger.warning("batch %s not handed to a worker: %s", batch_id, e)


def _send(task: str, batch_id: int) -> None:
    try:
        current_app.send_task(task, args=[batch_id])
    except (OperationalError, RedisError, OSError) as e:
        raise BrokerUnavailable(e) from e


def enqueue_host_drives(run_host_ids: list[int]) -> None:
    """One driver per load host of a cell, sent together as a group to the `drivers`
    queue; they meet at the cell's start barrier (runs/execution/multihost/barrier.py)."""
    group(current_app.signature(HOST_DRIVE, args=[i]) for i in run_host_ids).apply_async()
