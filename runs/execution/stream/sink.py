"""Where a running cell's output goes: every batch of lines live to viewers at once, and
samples, counter readings, host metrics and raw log to the database in bulk with the
heartbeat."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from runs.execution.host_metrics import HostMetricsSampler, HostRow
from runs.execution.outages.outage_buffer import OutageBuffer
from runs.execution.stream import live
from runs.execution.stream.sample_writes import (
    STATEMENT_ROWS,
    LiveSample,
    counter_records,
    counters_copy,
    host_metrics_copy,
    run_write,
    sample_record,
    samples_copy,
)
from runs.models import (
    Run,
)
from runs.sysbench.parser import (
    IntervalSample,
    QueueSample,
)


@dataclass
class LiveLost:
    """Live events Redis did not take (viewers were filled from the database)."""

    writes: int = 0
    samples: int = 0
    first_error: str = ""

    def note(self, samples: int, error: str) -> None:
        self.writes += 1
        self.samples += samples
        self.first_error = self.first_error or error

    def warnings(self) -> list[str]:
        if not self.writes:
            return []
        return [
            f"{self.writes} writes of live events ({self.samples} samples) were not published "
            f"live (Redis: {self.first_error}); every sample is stored all the same, and "
            "viewers got them from the database"
        ]


class SampleSink:
    """Collects a run's samples, counter readings and raw lines.

    Each batch of lines read from sysbench is published at once, with the samples parsed
    from it, in one write to Redis (`publish`): viewers see a line within milliseconds.
    Storing waits for the heartbeat (`flush`, every BENCHDASH_HEARTBEAT_SECONDS): one
    statement every few seconds, with the batch's beat, instead of several per line. A
    crash of the worker between two flushes loses at most that much raw log; its samples
    are in the run's recent list in Redis, which the sweeper stores.

    Every write can be repeated without doubling anything (samples and readings are unique
    per run and sequence number, the raw log is written as "the first N characters
    stored, then this chunk"), so a write whose answer was lost with the database is
    simply written again when it is back. A `--rate` queue line belongs to the interval
    line printed just before it, so it is merged into that sample.
    """

    def __init__(self, run: Run, *, warmup_s: float, store: OutageBuffer | None = None) -> None:
        self.run = run
        self.warmup_s = warmup_s
        self.store = store or OutageBuffer()
        self.period_s = settings.BENCHDASH_HEARTBEAT_SECONDS
        self._lines: list[str] = []  # not yet published
        self._fresh: list[LiveSample] = []  # not yet published
        self._samples: list[LiveSample] = []  # not yet stored
        self._counters: list[tuple[int, float, dict[str, float]]] = []  # not yet stored
        self.host_metrics: HostMetricsSampler | None = None  # the machines' /proc, if sampled
        self._hosts: list[HostRow] = []  # not yet stored
        self._queue_updates: list[LiveSample] = []  # stored before their queue line came
        self._log: list[str] = []  # not yet stored
        self._log_stored = len(run.raw_log or "")
        self._last: LiveSample | None = None
        self._live_lost = LiveLost()
        self._seq = 0
        self._last_flush = time.monotonic()

    # --- what sysbench prints -------------------------------------------------------------

    def add_line(self, line: str) -> None:
        self._lines.append(line)

    def add(self, event: object) -> None:
        if isinstance(event, IntervalSample):
            self._last = self._sample(event)
            self._fresh.append(self._last)
            self._samples.append(self._last)
        elif isinstance(event, QueueSample):
            self._merge_queue(event)

    def add_host_rows(self, rows: Sequence[HostRow]) -> None:
        """Host metrics rows closing after sysbench's last line: stored, and shown live."""
        self._hosts += rows
        if rows:
            live.publish(self.run.pk, [], [], rows)

    def add_counters(self, readings: Sequence[tuple[int, float, dict[str, float]]]) -> None:
        """Counter readings of the run: (seq, time_s, values)."""
        self._counters += readings

    def _sample(self, e: IntervalSample) -> LiveSample:
        self._seq += 1
        extra = dict(e.extra)
        if e.eps is not None:
            extra["eps"] = e.eps
        return LiveSample(
            run_id=self.run.pk,
            seq=self._seq,
            time_s=e.time_s,
            threads=e.threads,
            tps=e.tps,
            qps=e.qps,
            reads=e.reads,
            writes=e.writes,
            other=e.other,
            latency_pct=e.latency_pct,
            latency_ms=e.latency_ms,
            errors_per_s=e.errors_per_s,
            reconnects_per_s=e.reconnects_per_s,
            in_warmup=e.time_s <= self.warmup_s,
            extra=extra,
            received_at=timezone.now(),
            line=self._lines[-1] if self._lines else "",
        )

    def _merge_queue(self, e: QueueSample) -> None:
        last = self._last
        if last is None or last.time_s != e.time_s:
            return
        last.queue_length = e.queue_length
        last.concurrency = e.concurrency
        if last not in self._samples:  # already stored: update its row at the next flush
            self._queue_updates.append(last)

    # --- live, and stored -----------------------------------------------------------------

    def publish(self) -> int:
        """The lines read since the last call, and their samples, to live viewers; how
        many samples went out."""
        published = len(self._fresh)
        # The machines' new seconds ride along with sysbench's lines: no write of their own.
        hosts = self.host_metrics.take() if self.host_metrics is not None else []
        if self._lines or self._fresh or hosts:
            if error := live.publish(self.run.pk, self._lines, self._fresh, hosts):
                self._live_lost.note(len(self._fresh), error)
            self._log += self._lines
            self._hosts += hosts
            self._lines, self._fresh = [], []
        return published

    def warnings(self) -> list[str]:
        """What the run should say about its live events: those Redis did not take."""
        return self._live_lost.warnings()

    def due(self) -> bool:
        return time.monotonic() - self._last_flush >= self.period_s

    def flush(self, *, final: bool = False, wait_s: float | None = None) -> bool:
        """Publish what is new and store everything held, with the batch's heartbeat;
        whether the batch was cancelled, as the heartbeat learnt. While the database is
        away, everything stays held for the next flush; the final one waits for it
        (ResultsUnreachable beyond the store's limit, or `wait_s`)."""
        self.publish()
        self._last_flush = time.monotonic()
        if final:
            return self.store.ensure(self._write, wait_s)
        cancelled = [False]

        def write() -> None:
            cancelled[0] = self._write()

        self.store.attempt(write)
        return cancelled[0]

    def held(self) -> tuple[list[dict[str, object]], list[dict[str, object]], tuple[int, str]]:
        """Everything not stored yet, as `run_write_records` takes it: sample records,
        counter records, and the raw log (characters stored, then the chunk)."""
        self.publish()
        samples = [sample_record(s) for s in [*self._samples, *self._queue_updates]]
        chunk = "".join(line + "\n" for line in self._log)
        return samples, counter_records(self._counters), (self._log_stored, chunk)

    def _write(self) -> bool:
        chunk = "".join(line + "\n" for line in self._log)
        run, log = self.run, (self._log_stored, chunk)
        if len(self._samples) + len(self._counters) + len(self._hosts) <= STATEMENT_ROWS:
            # A heartbeat's worth: everything in one statement, one round trip.
            samples = [*self._samples, *self._queue_updates]
            cancelled = run_write(
                run, samples=samples, counters=self._counters, log=log, hosts=self._hosts
            )
        else:
            # A burst (a catch-up after an outage, a benchmark): COPY is faster per row.
            with transaction.atomic():
                samples_copy(self._samples)
                counters_copy(run.pk, self._counters)
                host_metrics_copy(run.pk, self._hosts)
                cancelled = run_write(run, samples=self._queue_updates, counters=[], log=log)
        self._samples, self._counters, self._queue_updates, self._log = [], [], [], []
        self._hosts = []
        self._log_stored += len(chunk)
        return cancelled
