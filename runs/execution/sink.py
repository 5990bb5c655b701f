"""Where a running cell's output goes: every batch of lines live to viewers at once, and
samples, counter readings and raw log to the database in bulk with the heartbeat."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from runs.execution import live
from runs.execution.results_store import ResultsStore
from runs.models import SAMPLE_FIGURES, Batch, CounterSample, Run, Sample, sample_figures
from runs.sysbench.parser import (
    IntervalSample,
    QueueSample,
)

BULK = 2000  # rows per INSERT
SAMPLE_COLUMNS = ("run_id", *SAMPLE_FIGURES, "extra", "received_at")
COUNTER_COLUMNS = ("run_id", "seq", "time_s", "values")
# Up to this many rows a write is one statement; a larger one goes by COPY.
STATEMENT_ROWS = 500


# The batch's heartbeat, which also answers whether a user cancelled it; parameters: the
# time, the batch's id. A running cell sends it with the run's own writes (run_write below);
# the worker's loop sends it alone between them (heartbeat.py).
BATCH_BEAT = (
    f"UPDATE {Batch._meta.db_table} SET heartbeat_at = %s WHERE id = %s "  # noqa: S608 - the model's own table
    "RETURNING cancel_requested_at IS NOT NULL"
)


@dataclass(slots=True, eq=False)  # one sample is itself: compared by identity
class LiveSample:
    """A sample on its way from sysbench's line to the database: the figures of a Sample
    row without a model instance, which costs more to make than the line to parse."""

    run_id: int
    seq: int
    time_s: float
    threads: int
    tps: float | None
    qps: float | None
    reads: float | None
    writes: float | None
    other: float | None
    latency_pct: float | None
    latency_ms: float | None
    errors_per_s: float | None
    reconnects_per_s: float | None
    in_warmup: bool
    extra: dict[str, float]
    received_at: datetime
    queue_length: int | None = None
    concurrency: int | None = None
    line: str = ""  # sysbench's line it was parsed from: in the recent list with it


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

    def __init__(self, run: Run, *, warmup_s: float, store: ResultsStore | None = None) -> None:
        self.run = run
        self.warmup_s = warmup_s
        self.store = store or ResultsStore()
        self.period_s = settings.BENCHDASH_HEARTBEAT_SECONDS
        self._lines: list[str] = []  # not yet published
        self._fresh: list[LiveSample] = []  # not yet published
        self._samples: list[LiveSample] = []  # not yet stored
        self._counters: list[tuple[int, float, dict[str, float]]] = []  # not yet stored
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
        if self._lines or self._fresh:
            if error := live.publish(self.run.pk, self._lines, self._fresh):
                self._live_lost.note(len(self._fresh), error)
            self._log += self._lines
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
        samples = [_sample_record(s) for s in [*self._samples, *self._queue_updates]]
        chunk = "".join(line + "\n" for line in self._log)
        return samples, _counter_records(self._counters), (self._log_stored, chunk)

    def _write(self) -> bool:
        chunk = "".join(line + "\n" for line in self._log)
        run, log = self.run, (self._log_stored, chunk)
        if len(self._samples) + len(self._counters) <= STATEMENT_ROWS:
            # A heartbeat's worth: everything in one statement, one round trip.
            samples = [*self._samples, *self._queue_updates]
            cancelled = run_write(run, samples=samples, counters=self._counters, log=log)
        else:
            # A burst (a catch-up after an outage, a benchmark): COPY is faster per row.
            with transaction.atomic():
                samples_copy(self._samples)
                counters_copy(run.pk, self._counters)
                cancelled = run_write(run, samples=self._queue_updates, counters=[], log=log)
        self._samples, self._counters, self._queue_updates, self._log = [], [], [], []
        self._log_stored += len(chunk)
        return cancelled


def run_write(
    run: Run,
    *,
    samples: Sequence[LiveSample],
    counters: Sequence[tuple[int, float, dict[str, float]]],
    log: tuple[int, str],
) -> bool:
    """A run's new samples, counter readings and raw log, with its heartbeat and its
    batch's, in one statement (a worker that wakes once a second pays for every round
    trip); whether the batch was cancelled (or deleted), as `batch_beat` answers.

    It can be repeated: rows already stored are skipped, but for a sample stored before
    its `--rate` queue line came, which gets the queue figures; the raw log is written as
    "the first N characters stored, then this chunk"."""
    records = [_sample_record(s) for s in samples]
    return run_write_records(run, samples=records, counters=_counter_records(counters), log=log)


def run_write_records(
    run: Run,
    *,
    samples: Sequence[dict[str, object]],
    counters: Sequence[dict[str, object]],
    log: tuple[int, str],
) -> bool:
    """`run_write` of samples and counter readings given as JSON records (as the sweeper
    has them from a worker's handover, runs/execution/handover.py)."""
    stored, chunk = log
    now = timezone.now()
    parts = [f"b (cancelled) AS ({BATCH_BEAT})"]
    params: list[datetime | int | str] = [now, run.batch_id]
    if samples:
        parts.append(f"s AS ({_samples_insert()})")
        params += [run.pk, json.dumps(list(samples))]
    if counters:
        parts.append(f"c AS ({_counters_insert()})")
        params += [run.pk, json.dumps(list(counters))]
    # The raw log is left alone when no line came: rewriting it costs the database.
    set_log = ", raw_log = left(raw_log, %s) || %s" if chunk else ""
    params += [now, *((stored, chunk) if chunk else ()), run.pk]
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH {', '.join(parts)} UPDATE {Run._meta.db_table} "  # noqa: S608 - our names
            f"SET heartbeat_at = %s{set_log} WHERE id = %s RETURNING (SELECT cancelled FROM b)",
            params,
        )
        row = cursor.fetchone()
    return row is None or row[0] is not False


def _counter_records(
    counters: Sequence[tuple[int, float, dict[str, float]]],
) -> list[dict[str, object]]:
    return [{"seq": seq, "time_s": t, "values": values} for seq, t, values in counters]


def _sample_record(s: LiveSample) -> dict[str, object]:
    record = dict(zip(SAMPLE_FIGURES, sample_figures(s), strict=True))
    record["extra"] = s.extra
    record["received_at"] = s.received_at.isoformat()
    return record


def _insert_from_json(model: type[models.Model], names: Sequence[str], conflict: str) -> str:
    """INSERT of a run's rows given as a JSON array of objects (one parameter, whatever
    their number), unique per (run_id, seq)."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(name) for name in names)
    record = ", ".join(
        f"{quote(name)} {model._meta.get_field(name).db_type(connection)}" for name in names
    )
    return (
        f"INSERT INTO {model._meta.db_table} (run_id, {columns}) "  # noqa: S608 - our names
        f"SELECT %s, {columns} FROM jsonb_to_recordset(%s::jsonb) AS r({record}) "
        f"ON CONFLICT (run_id, seq) {conflict}"
    )


@cache
def _samples_insert() -> str:
    # A sample stored before its queue line came is written again with the queue figures.
    return _insert_from_json(
        Sample,
        SAMPLE_COLUMNS[1:],
        "DO UPDATE SET queue_length = EXCLUDED.queue_length, concurrency = EXCLUDED.concurrency "
        "WHERE EXCLUDED.queue_length IS NOT NULL",
    )


@cache
def _counters_insert() -> str:
    return _insert_from_json(CounterSample, COUNTER_COLUMNS[1:], "DO NOTHING")


def samples_copy(samples: list[LiveSample]) -> None:
    """Store samples with COPY. Call inside a transaction."""
    rows_copy(
        "runs_sample",
        SAMPLE_COLUMNS,
        # COPY reads jsonb as text: most samples have no extra figures.
        [
            (s.run_id, *sample_figures(s), json.dumps(s.extra) if s.extra else "{}", s.received_at)
            for s in samples
        ],
    )


def counters_copy(run_id: int, readings: list[tuple[int, float, dict[str, float]]]) -> None:
    """Store counter readings (seq, time_s, values) with COPY. Call inside a transaction."""
    rows_copy(
        "runs_countersample",
        COUNTER_COLUMNS,
        [(run_id, seq, time_s, json.dumps(values)) for seq, time_s, values in readings],
    )


def rows_copy(table: str, columns: tuple[str, ...], rows: list[tuple[object, ...]]) -> None:
    """Rows unique per (run_id, seq) into `table` with COPY, far less work than an INSERT
    the ORM builds.

    COPY cannot skip rows already stored (a write whose answer was lost with the database
    did commit; the sweeper may have stored a silent worker's recent samples): when it
    meets one, the rows go through a staging table, emptied at each commit, whose rows
    then join the table but for those already there."""
    if not rows:
        return
    names = ", ".join(columns)
    try:
        with transaction.atomic(), connection.cursor() as cursor:  # a savepoint
            _copy(cursor, table, names, rows)
    except IntegrityError:
        staging = f"{table}_staging"
        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS {staging} ON COMMIT DELETE ROWS AS "  # noqa: S608 - our names
                f"SELECT {names} FROM {table} WITH NO DATA"
            )
            _copy(cursor, staging, names, rows)
            cursor.execute(
                f"INSERT INTO {table} ({names}) SELECT {names} FROM {staging} "  # noqa: S608 - our names
                "ON CONFLICT (run_id, seq) DO NOTHING"
            )


def _copy(cursor: CursorWrapper, table: str, names: str, rows: list[tuple[object, ...]]) -> None:
    # Django's own errors from psycopg's COPY, as from any statement: a lost connection
    # is an OperationalError the results store waits out, a stored row an IntegrityError.
    with (
        cursor.db.wrap_database_errors,
        cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)


def run_store_recent_samples(*, run: Run) -> int:
    """Store the samples a dead worker published but had not stored yet, from the run's
    recent list in Redis (runs/execution/live.py), their lines added to the raw log and
    the run saying so; how many were missing."""
    stored = set(run.samples.values_list("seq", flat=True))
    # Read after the run started: a list left by a run of a recreated database, under the
    # same id, is not this run's.
    started = run.started_at.timestamp() if run.started_at else float("inf")
    missing = [
        (_sample_of(run, payload), line)
        for payload, line in live.recent_entries(run.pk)
        if int(payload["seq"]) not in stored and float(payload["received_at"]) >= started
    ]
    if not missing:
        return 0
    Sample.objects.bulk_create([s for s, _ in missing], batch_size=BULK, ignore_conflicts=True)
    run.raw_log = (run.raw_log or "") + "".join(line + "\n" for _, line in missing if line)
    first, last = missing[0][0].seq, missing[-1][0].seq
    run.warnings = [
        *run.warnings,
        f"{len(missing)} samples (#{first} to #{last}) were stored from the live list in "
        "Redis after the worker died; their lines were added to the raw log",
    ]
    run.save(update_fields=["raw_log", "warnings"])
    return len(missing)


def _sample_of(run: Run, payload: dict[str, object]) -> Sample:
    figures = {name: payload.get(name) for name in SAMPLE_FIGURES}
    extra = {k: v for k, v in payload.items() if k not in SAMPLE_FIGURES and k != "received_at"}
    received_at = datetime.fromtimestamp(float(payload["received_at"]), tz=UTC)  # type: ignore[arg-type]
    figures["in_warmup"] = bool(figures["in_warmup"])
    return Sample(run=run, **figures, extra=extra, received_at=received_at)
