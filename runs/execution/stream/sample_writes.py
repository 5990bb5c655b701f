"""A running cell's rows on their way into the database: the sample as it travels
(LiveSample), the heartbeat's one statement that stores a run's new samples, counter
readings, host metrics and raw log with the batch's beat (`run_write`), COPY for a burst,
and the samples a dead worker left in Redis, stored by the sweeper.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

import orjson
from django.db import IntegrityError, connection, models, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from runs.execution.host_metrics import HostRow
from runs.execution.stream import live
from runs.models import (
    SAMPLE_FIGURES,
    Batch,
    CounterSample,
    HostMetrics,
    Run,
    Sample,
    sample_figures,
)

BULK = 2000  # rows per INSERT
SAMPLE_COLUMNS = ("run_id", *SAMPLE_FIGURES, "extra", "received_at")
COUNTER_COLUMNS = ("run_id", "seq", "time_s", "values")
HOST_COLUMNS = ("run_id", "role", "host", "seq", "time_s", "values")
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


def run_write(
    run: Run,
    *,
    samples: Sequence[LiveSample],
    counters: Sequence[tuple[int, float, dict[str, float]]],
    log: tuple[int, str],
    hosts: Sequence[HostRow] = (),
) -> bool:
    """A run's new samples, counter readings, host metrics and raw log, with its heartbeat
    and its batch's, in one statement (a worker that wakes once a second pays for every
    round trip); whether the batch was cancelled (or deleted), as `batch_beat` answers.

    It can be repeated: rows already stored are skipped, but for a sample stored before
    its `--rate` queue line came, which gets the queue figures; the raw log is written as
    "the first N characters stored, then this chunk"."""
    return run_write_records(
        run,
        samples=[sample_record(s) for s in samples],
        counters=counter_records(counters),
        log=log,
        hosts=[row.record() for row in hosts],
    )


def run_write_records(
    run: Run,
    *,
    samples: Sequence[dict[str, object]],
    counters: Sequence[dict[str, object]],
    log: tuple[int, str],
    hosts: Sequence[dict[str, object]] = (),
) -> bool:
    """`run_write` of rows given as JSON records (as the sweeper has them from a worker's
    handover, runs/execution/outages/handover.py)."""
    stored, chunk = log
    now = timezone.now()
    parts = [f"b (cancelled) AS ({BATCH_BEAT})"]
    params: list[datetime | int | str] = [now, run.batch_id]
    if samples:
        parts.append(f"s AS ({_samples_insert()})")
        params += [run.pk, _json(samples)]
    if counters:
        parts.append(f"c AS ({_counters_insert()})")
        params += [run.pk, _json(counters)]
    if hosts:
        parts.append(f"h AS ({_hosts_insert()})")
        params += [run.pk, _json(hosts)]
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


def _json(records: Sequence[dict[str, object]]) -> str:
    # orjson: a heartbeat's rows in a quarter of json's time (0.07 against 0.27 ms a beat).
    return orjson.dumps(list(records)).decode()


def counter_records(
    counters: Sequence[tuple[int, float, dict[str, float]]],
) -> list[dict[str, object]]:
    return [{"seq": seq, "time_s": t, "values": values} for seq, t, values in counters]


def sample_record(s: LiveSample) -> dict[str, object]:
    record = dict(zip(SAMPLE_FIGURES, sample_figures(s), strict=True))
    record["extra"] = s.extra
    record["received_at"] = s.received_at.isoformat()
    return record


def _insert_from_json(
    model: type[models.Model], names: Sequence[str], conflict: str, unique: str = "run_id, seq"
) -> str:
    """INSERT of a run's rows given as a JSON array of objects (one parameter, whatever
    their number), unique per `unique` (run_id, seq)."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(name) for name in names)
    record = ", ".join(
        f"{quote(name)} {model._meta.get_field(name).db_type(connection)}" for name in names
    )
    return (
        f"INSERT INTO {model._meta.db_table} (run_id, {columns}) "  # noqa: S608 - our names
        f"SELECT %s, {columns} FROM jsonb_to_recordset(%s::jsonb) AS r({record}) "
        f"ON CONFLICT ({unique}) {conflict}"
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


@cache
def _hosts_insert() -> str:
    return _insert_from_json(
        HostMetrics, HOST_COLUMNS[1:], "DO NOTHING", unique="run_id, role, host, seq"
    )


def host_metrics_copy(run_id: int, rows: list[HostRow]) -> None:
    """Store host metrics rows with COPY. Call inside a transaction."""
    rows_copy(
        HostMetrics._meta.db_table,
        HOST_COLUMNS,
        [(run_id, r.role, r.host, r.seq, r.time_s, json.dumps(r.values)) for r in rows],
        unique="run_id, role, host, seq",
    )


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


def rows_copy(
    table: str,
    columns: tuple[str, ...],
    rows: list[tuple[object, ...]],
    unique: str = "run_id, seq",
) -> None:
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
                f"ON CONFLICT ({unique}) DO NOTHING"
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
    recent list in Redis (runs/execution/stream/live.py), their lines added to the raw log and
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
