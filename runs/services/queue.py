"""Handing work to the workers.

Services enqueue tasks by name: the tasks module stands above the services (a task is an
entry point that calls a service), so the services never import it. Callers inside a
transaction enqueue with `transaction.on_commit`, so that a worker never looks for a row
that is not committed yet.
"""

from __future__ import annotations

from benchdash.celery import app

BATCH_EXECUTE = "runs.tasks.batch_execute"
BATCH_ANALYSE = "runs.tasks.batch_analyse"


def enqueue_batch(batch_id: int) -> None:
    """Hand a batch to a worker; redelivery is harmless, the claim is conditional."""
    app.send_task(BATCH_EXECUTE, args=[batch_id])


def enqueue_analyse(batch_id: int) -> None:
    """The regression check and the news of a finished scheduled batch."""
    app.send_task(BATCH_ANALYSE, args=[batch_id])
