"""How a log import reads and stores in bounded memory: the log line by line with its size
checked as it is read, the samples and the raw log written with COPY every few thousand
lines, the raw log joined in the database at the end.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any, BinaryIO

from django.conf import settings
from django.db import connection
from django.db.models import Aggregate, Avg, Count, FloatField, Max, Min, StdDev

from runs.analysis.noise import stats
from runs.errors import InvalidInput
from runs.models import Run, Sample
from runs.sysbench.commandline import redact_secrets
from runs.sysbench.output import IntervalSample, QueueSample

FLUSH_LINES = 5000  # lines (and at most as many samples) held before they are written
FIRST_SAMPLES = 30  # kept for a preview, and the answer of the API
MAX_LINE_BYTES = 64 * 1024  # a longer "line" is a binary splinter: read in pieces

_SAMPLE_COLUMNS = (
    "run_id", "seq", "time_s", "threads", "tps", "qps", "reads", "writes", "other",
    "latency_pct", "latency_ms", "errors_per_s", "reconnects_per_s", "queue_length",
    "concurrency", "in_warmup", "extra", "received_at",
)  # fmt: skip
_RAW_LOG = "benchdash_import_raw_log"  # a temporary table: the log's pieces, in order


class _Median(Aggregate):
    function = "percentile_cont"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def max_log_bytes() -> int:
    return int(settings.BENCHDASH_MAX_LOG_MB * 1024 * 1024)


def log_too_large() -> str:
    return f"the log is larger than {settings.BENCHDASH_MAX_LOG_MB:g} MB"


def log_lines(log: BinaryIO) -> Iterator[str]:
    """The lines of a log as text, without their line ends, its passwords masked.

    Old logs are not always UTF-8 and may hold binary splinters: a stray byte becomes
    U+FFFD and NUL (which PostgreSQL cannot store in text) too; neither stops the
    import. Raises InvalidInput as soon as the log is larger than the limit, or at
    its end when it holds nothing but blank lines."""
    limit, read, blank = max_log_bytes(), 0, True
    while chunk := log.readline(MAX_LINE_BYTES):
        read += len(chunk)
        if read > limit:
            raise InvalidInput("file", log_too_large())
        line = chunk.decode("utf-8", errors="replace").rstrip("\r\n").replace("\x00", "\ufffd")
        blank = blank and not line.strip()
        yield redact_secrets(line)
    if blank:
        raise InvalidInput("file", "the log is empty")


class ImportStore:
    """The samples and raw log of one imported run, written in batches with COPY."""

    def __init__(self, run: Run, received_at: datetime) -> None:
        self.run = run
        self._run_id = run.pk
        self._received_at = received_at.isoformat()  # formatted once, not once a row
        self.samples = 0
        self.max_threads = 0  # the largest thread count a sample printed
        self.first: list[IntervalSample] = []  # the first samples, for a preview
        self._pending: IntervalSample | None = None  # until its `--rate` queue line
        self._rows: list[tuple[Any, ...]] = []
        self._lines: list[str] = []
        self._pieces = 0
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TEMPORARY TABLE {_RAW_LOG} (n integer, piece text)")

    def line(self, text: str) -> None:
        self._lines.append(text)
        if len(self._lines) >= FLUSH_LINES:
            self._flush()

    def sample(self, sample: IntervalSample) -> None:
        self._take_pending(None)
        self._pending = sample

    def queue(self, queue: QueueSample) -> None:
        """sysbench prints a `--rate` queue line right after the interval line of the
        same second: it joins that sample."""
        if self._pending is not None and self._pending.time_s == queue.time_s:
            self._take_pending(queue)

    def close(self) -> None:
        self._take_pending(None)
        self._flush()

    def raw_log(self) -> None:
        """The log's pieces joined into the run's raw log, in the database."""
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {Run._meta.db_table} SET raw_log = coalesce("  # noqa: S608
                f"(SELECT string_agg(piece, '' ORDER BY n) FROM {_RAW_LOG}), '') WHERE id = %s",
                [self.run.pk],
            )
            cursor.execute(f"DROP TABLE {_RAW_LOG}")

    def set_threads(self, threads: int) -> None:
        """Samples of lines that print no thread count (fileio, memory) before the log
        said how many threads it ran get the run's."""
        Sample.objects.filter(run=self.run, threads=0).update(threads=threads)

    def set_percentile(self, percentile: float) -> None:
        """Samples with a latency take the percentile the log's final report says: a
        report hook's lines (CSV, JSON) do not say theirs, and were read before the report
        came (an interval line says its own, the same)."""
        Sample.objects.filter(run=self.run, latency_ms__isnull=False).exclude(
            latency_pct=percentile
        ).update(latency_pct=percentile)
        self.first = [
            s if s.latency_ms is None else dataclasses.replace(s, latency_pct=percentile)
            for s in self.first
        ]

    def interval_tps(self, warmup_s: float) -> stats.Spread | None:
        """The spread of the stored samples' tps after the warmup, computed where they are."""
        figures = Sample.objects.filter(
            run=self.run, tps__isnull=False, time_s__gt=warmup_s
        ).aggregate(
            n=Count("tps"), mean=Avg("tps"), median=_Median("tps"),
            stddev=StdDev("tps", sample=True), low=Min("tps"), high=Max("tps"),
        )  # fmt: skip
        if not figures["n"]:
            return None
        mean, stddev = figures["mean"], figures["stddev"]
        return stats.Spread(
            n=figures["n"], mean=mean, median=figures["median"], stddev=stddev,
            cv=stddev / mean if stddev is not None and mean != 0 else None,
            min=figures["low"], max=figures["high"],
        )  # fmt: skip

    def _take_pending(self, queue: QueueSample | None) -> None:
        sample, self._pending = self._pending, None
        if sample is None:
            return
        self.samples += 1
        self.max_threads = max(self.max_threads, sample.threads)
        if len(self.first) < FIRST_SAMPLES:
            self.first.append(sample)
        self._rows.append(self._row(sample, queue))

    def _row(self, s: IntervalSample, queue: QueueSample | None) -> tuple[Any, ...]:
        extra = {**s.extra, "eps": s.eps} if s.eps is not None else s.extra
        return (
            self._run_id, self.samples, s.time_s, s.threads, s.tps, s.qps, s.reads, s.writes,
            s.other, s.latency_pct, s.latency_ms, s.errors_per_s, s.reconnects_per_s,
            queue.queue_length if queue else None, queue.concurrency if queue else None,
            False, json.dumps(extra) if extra else "{}", self._received_at,
        )  # fmt: skip

    def _flush(self) -> None:
        with connection.cursor() as cursor:
            if self._rows:
                columns = ", ".join(_SAMPLE_COLUMNS)
                sql = f"COPY {Sample._meta.db_table} ({columns}) FROM STDIN"
                with cursor.cursor.copy(sql) as copy:
                    for row in self._rows:
                        copy.write_row(row)
                self._rows = []
            if self._lines:
                self._lines.append("")  # the line end of the piece's last line
                cursor.execute(
                    f"INSERT INTO {_RAW_LOG} (n, piece) VALUES (%s, %s)",  # noqa: S608
                    [self._pieces, "\n".join(self._lines)],
                )
                self._pieces += 1
                self._lines = []
