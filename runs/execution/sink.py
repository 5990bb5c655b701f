"""Where a running cell's output goes: samples and raw lines, live to viewers and in small
bulks to the database."""

from __future__ import annotations

import time

from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from runs.execution import live
from runs.models import Run, Sample
from runs.sysbench.parser import (
    IntervalSample,
    QueueSample,
)

FLUSH_S = 0.5  # samples are written at most this long after their line
# The raw log is appended less often: each append rewrites the whole stored text, and the
# lines already reach viewers live. A crash loses at most this much of the raw log (never
# a sample).
RAW_LOG_FLUSH_S = 5.0


class SampleSink:
    """Collects a run's samples and raw lines and writes them in small bulks.

    Interval lines arrive about once a second; writing every FLUSH_S keeps each sample
    within a second of its line without a query per line. A `--rate` queue line belongs
    to the interval line printed just before it, so it is merged into that sample.
    """

    def __init__(self, run: Run, *, warmup_s: float) -> None:
        self.run = run
        self.warmup_s = warmup_s
        self._pending: list[Sample] = []
        self._lines: list[str] = []  # not yet published
        self._unsaved_log: list[str] = []  # published, not yet in the raw log
        self._last: Sample | None = None
        self._seq = 0
        self._last_flush = time.monotonic()
        self._last_log_flush = self._last_flush

    def add_line(self, line: str) -> None:
        self._lines.append(line + "\n")

    def add(self, event: object) -> None:
        if isinstance(event, IntervalSample):
            self._last = self._sample(event)
            self._pending.append(self._last)
            live.publish_sample(self.run.pk, self._last)  # live first, stored within FLUSH_S
        elif isinstance(event, QueueSample):
            self._merge_queue(event)

    def _sample(self, e: IntervalSample) -> Sample:
        self._seq += 1
        extra = dict(e.extra)
        if e.eps is not None:
            extra["eps"] = e.eps
        return Sample(
            run=self.run,
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
        )

    def _merge_queue(self, e: QueueSample) -> None:
        last = self._last
        if last is None or last.time_s != e.time_s:
            return
        last.queue_length = e.queue_length
        last.concurrency = e.concurrency
        if last not in self._pending:  # already written: update the row
            Sample.objects.filter(run=self.run, seq=last.seq).update(
                queue_length=e.queue_length, concurrency=e.concurrency
            )

    def due(self) -> bool:
        return time.monotonic() - self._last_flush >= FLUSH_S

    def flush(self, *, final: bool = False) -> None:
        now = time.monotonic()
        self._last_flush = now
        if self._pending:
            Sample.objects.bulk_create(self._pending)
            self._pending = []
        if self._lines:
            live.publish_lines(self.run.pk, [line.rstrip("\n") for line in self._lines])
            self._unsaved_log += self._lines
            self._lines = []
        if self._unsaved_log and (final or now - self._last_log_flush >= RAW_LOG_FLUSH_S):
            self._last_log_flush = now
            chunk = "".join(self._unsaved_log)
            self._unsaved_log = []
            Run.objects.filter(pk=self.run.pk).update(raw_log=Concat(F("raw_log"), Value(chunk)))
