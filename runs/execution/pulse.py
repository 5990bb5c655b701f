"""The rhythm of a running batch: what the worker does between two lines of sysbench.

The worker blocks on sysbench's output until a line comes or the next thing is due: the
heartbeat (every BENCHDASH_HEARTBEAT_SECONDS), which also tells whether a user cancelled
the batch and stores what the run's sink holds, or the run's time limit. Nothing wakes
it up in between: a quiet benchmark costs a quiet worker.
"""

from __future__ import annotations

import time

from django.conf import settings

from runs.execution.results_store import ResultsStore
from runs.execution.sink import SampleSink
from runs.execution.watch import BatchStopped, Watch, batch_beat
from runs.models import Status
from runs.targets.counters import CounterSampler


class Pulse:
    """The batch's heartbeat, its writes while the results database may be away, and
    the decision to stop."""

    def __init__(self, batch_id: int, store: ResultsStore) -> None:
        self.batch_id = batch_id
        self.store = store
        self.period_s = settings.BENCHDASH_HEARTBEAT_SECONDS
        self._next_beat = 0.0  # the first tick beats

    def wait_s(self, watch: Watch) -> float:
        """How long the worker may block on sysbench's output before something is due."""
        due = self._next_beat
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
