"""The heartbeat of a running batch, and when its benchmark must stop.

The worker blocks on sysbench's output until a line comes or the next thing is due
(`Pulse`): the heartbeat (every BENCHDASH_HEARTBEAT_SECONDS), which also tells whether a
user cancelled the batch and stores what the run's sink holds, the run's time limit, or a
counter reading the worker takes itself when no line came (runs/targets/counters.py).
Nothing else wakes it up in between: a quiet benchmark costs a quiet worker; a running
one's heartbeat waits up to RIDE_S for the line that wakes the worker anyway. `Watch` says when
a running benchmark must stop and why (`BatchStopped`): a user cancelled its batch, it
overran its expected duration, or its worker is stopping.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.db import connection
from django.utils import timezone

from runs.execution.outages.outage_buffer import OutageBuffer
from runs.execution.stream.sample_writes import BATCH_BEAT
from runs.execution.stream.sink import SampleSink
from runs.models import Status
from runs.targets.counters import CounterSampler

# Set when the worker is asked to stop (SIGTERM on a deploy): the running benchmark is
# stopped and the batch handed back to the queue, to go on when a worker is back.
WORKER_STOPPING = threading.Event()
# How late a running benchmark's heartbeat may be, waiting for a line to wake the worker.
RIDE_S = 1.0


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
    batch (heard at once through Redis, cancel.py, or learnt from the heartbeat, see
    `batch_beat`), the run overran its expected
    duration, or the worker is stopping.
    """

    def __init__(
        self,
        batch_id: int,
        expected_duration_s: float | None = None,
        cancel_heard: threading.Event | None = None,
    ) -> None:
        self.batch_id = batch_id
        # Set by the batch's CancelListener (cancel.py) the moment a user cancels.
        self.cancel_heard = cancel_heard or threading.Event()
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
        if cancelled or self.cancel_heard.is_set():
            return BatchStopped(Status.CANCELLED, "the batch was cancelled")
        return None


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


class Pulse:
    """The batch's heartbeat, its writes while the results database may be away, and
    the decision to stop."""

    def __init__(self, batch_id: int, store: OutageBuffer) -> None:
        self.batch_id = batch_id
        self.store = store
        self.period_s = settings.BENCHDASH_HEARTBEAT_SECONDS
        self._next_beat = 0.0  # the first tick beats

    def wait_s(
        self, watch: Watch, sampler: CounterSampler | None = None, *, ride: bool = False
    ) -> float:
        """How long the worker may block on sysbench's output before something is due: the
        run's time limit, the counters' reading the worker takes (CounterSampler.due_at),
        the heartbeat. With `ride` (a running benchmark), the heartbeat waits up to RIDE_S
        for the next interval line, which wakes the worker anyway: a wake-up fewer a beat."""
        due = self._next_beat + (RIDE_S if ride else 0.0)
        if sampler is not None and (reading := sampler.due_at()) is not None:
            due = min(due, reading)
        if watch.deadline is not None:
            due = min(due, watch.deadline)
        return max(0.0, due - time.monotonic())

    def tick(
        self,
        watch: Watch,
        sink: SampleSink | None = None,
        sampler: CounterSampler | None = None,
    ) -> BatchStopped | None:
        """Beat and store when due; then whether the benchmark must stop, and why."""
        cancelled = False
        now = time.monotonic()
        if now >= self._next_beat:
            self._next_beat = now + self.period_s
            if sink is None:
                cancelled = self.beat()
            else:  # the batch beats in the statement that stores what the sink holds
                if sampler is not None:
                    sink.add_counters(sampler.take())
                cancelled = sink.flush()
        if self.store.overdue():
            return self.results_lost()
        return watch.check(cancelled=cancelled)

    def beat(self) -> bool:
        """The heartbeat now; whether the batch was cancelled. Skipped while the results
        database is away (the watch and the outage limit still decide)."""
        cancelled = [False]

        def write() -> None:
            cancelled[0] = batch_beat(self.batch_id)

        self.store.attempt(write)
        return cancelled[0]

    def results_lost(self) -> BatchStopped:
        outage = self.store.outages[-1]
        return BatchStopped(
            Status.FAILED,
            f"stopped: the results database was unreachable for more than "
            f"{self.store.limit_s:g} s (since {outage.started:%H:%M:%S} UTC: {outage.error}); "
            "sysbench was stopped and the server's settings restored; the samples until "
            "then are kept",
            kind="results_db",
        )
