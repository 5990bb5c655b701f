"""When a running benchmark must stop, and why: a user cancelled its batch, it overran its
expected duration, or its worker is stopping."""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.utils import timezone

from runs.models import Batch, Status

# Set when the worker is asked to stop (SIGTERM on a deploy): the running benchmark is
# stopped and the batch handed back to the queue, to go on when a worker is back.
WORKER_STOPPING = threading.Event()


class BatchStopped(Exception):
    """The batch stops early on purpose: cancelled by a user, or its worker is stopping."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Watch:
    """Decides at every tick whether the running benchmark must stop, and why: the user
    cancelled the batch, the run overran its expected duration, or the worker is stopping.
    """

    CANCEL_CHECK_S = 1.0

    def __init__(self, batch_id: int, expected_duration_s: float | None = None) -> None:
        self.batch_id = batch_id
        self.expected_s = expected_duration_s
        self.started = time.monotonic()
        self._last_cancel_check = self.started
        self.limit_s = _time_limit(expected_duration_s)

    def check(self) -> BatchStopped | None:
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
        if now - self._last_cancel_check >= self.CANCEL_CHECK_S:
            self._last_cancel_check = now
            if Batch.objects.filter(pk=self.batch_id, cancel_requested_at__isnull=False).exists():
                return BatchStopped(Status.CANCELLED, "the batch was cancelled")
        return None


def _time_limit(expected_s: float | None) -> float | None:
    """Expected duration + max(margin, 20 %): generous for slow starts, not for hangs."""
    if expected_s is None:
        return None
    return expected_s + max(settings.BENCHDASH_TIMEOUT_MARGIN_S, 0.2 * expected_s)
