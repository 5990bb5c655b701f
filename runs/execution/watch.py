"""When a running benchmark must stop, and why: a user cancelled its batch, it overran its
expected duration, or its worker is stopping."""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.db import connection
from django.utils import timezone

from runs.models import Batch, Status

# Set when the worker is asked to stop (SIGTERM on a deploy): the running benchmark is
# stopped and the batch handed back to the queue, to go on when a worker is back.
WORKER_STOPPING = threading.Event()


class BatchStopped(Exception):
    """The batch stops early on purpose: cancelled by a user, or its worker is stopping."""

    def __init__(self, status: str, reason: str, kind: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        # The run's error_kind: a stopped run that failed timed out, unless told otherwise.
        self.kind = kind or ("timeout" if status == Status.FAILED else status)


class Watch:
    """Decides whether the running benchmark must stop, and why: the user cancelled the
    batch (learnt from the heartbeat, see `batch_beat`), the run overran its expected
    duration, or the worker is stopping.
    """

    def __init__(self, batch_id: int, expected_duration_s: float | None = None) -> None:
        self.batch_id = batch_id
        self.expected_s = expected_duration_s
        self.started = time.monotonic()
        self.limit_s = _time_limit(expected_duration_s)

    @property
    def deadline(self) -> float | None:
        """When the run overruns (time.monotonic()), if it has a limit."""
        return None if self.limit_s is None else self.started + self.limit_s

    def check(self, *, cancelled: bool = False) -> BatchStopped | None:
        now = time.monotonic()
        if WORKER_STOPPING.is_set():
            return BatchStopped(
                Status.INTERRUPTED,
                f"the worker was asked to stop at {timezone.now():%Y-%m-%d %H:%M:%S} UTC; "
                "the batch goes on when a worker is back",
            )
        if self.limit_s is not None and now - self.started > self.limit_s:
            return BatchStopped(
                Status.FAILED,
                f"timed out: still running {now - self.started:.0f} s after it started, "
                f"expected {self.expected_s:g} s; sysbench was stopped",
            )
        if cancelled:
            return BatchStopped(Status.CANCELLED, "the batch was cancelled")
        return None


# The batch's heartbeat, which also answers whether a user cancelled it; parameters: the
# time, the batch's id. A running cell sends it with the run's own writes (sink.py).
BATCH_BEAT = (
    f"UPDATE {Batch._meta.db_table} SET heartbeat_at = %s WHERE id = %s "  # noqa: S608 - the model's own table
    "RETURNING cancel_requested_at IS NOT NULL"
)


def batch_beat(batch_id: int) -> bool:
    """The batch's heartbeat in one statement: True when it was cancelled (or deleted).
    A cancelled batch still beats: its cleanup may take a while."""
    with connection.cursor() as cursor:
        cursor.execute(BATCH_BEAT, [timezone.now(), batch_id])
        row = cursor.fetchone()
    return row is None or bool(row[0])


def _time_limit(expected_s: float | None) -> float | None:
    """Expected duration + max(margin, 20 %): generous for slow starts, not for hangs."""
    if expected_s is None:
        return None
    return expected_s + max(settings.BENCHDASH_TIMEOUT_MARGIN_S, 0.2 * expected_s)
