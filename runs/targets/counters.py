"""The server's status counters, sampled while sysbench runs.

Throughput alone does not say why it moves; the server's own counters do (rows read per
query, log fsyncs per transaction, spin waits...). A sampler with a connection of its own
reads them every report interval from the moment sysbench starts until it ends: when an
interval line wakes the worker anyway (one wake-up a second for the whole worker), or a
quarter of an interval late when no line comes. Where a reading is one statement the
worker itself sends it and reads the answer at its next wake; otherwise the sampler's
thread reads, nudged by the worker (`CounterSampler`). Each reading's time_s counts from
sysbench's start, like the samples of the interval lines, so the two series line up.
The sampler only reads: the runner takes its new readings with `take()` and stores them
in bulk with the run's samples (runs/execution/stream/sink.py). When sysbench is done, the run
gets the deltas over the run, rates, gauge averages and a few derived ratios.

At its first and last readings it also snapshots what the server accounts for inside
itself (wait summaries, statement digests: runs/targets/inside.py), and on PostgreSQL a
second thread samples the waits in progress; the run keeps their deltas in
counters["inside"] (runs/analysis/why/inside.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings

from runs import targets
from runs.analysis.why.inside import inside_summary
from runs.columns import RunCounters, RunOptions
from runs.frozen import FrozenPlan
from runs.models import Batch, Run, Target
from runs.sysbench.command import Connection
from runs.sysbench.options import is_sql_test
from runs.targets.base import ReadsLater
from runs.targets.inside import WaitSampler

logger = logging.getLogger(__name__)

# Levels, not counts: averaged and maxed over the run instead of differenced.
GAUGES = frozenset(
    {"Threads_running", "Threads_connected", "backends_active", "backends_total", "sync_binlog"}
)
_QUERY_COUNTERS = ("Com_select", "Com_insert", "Com_update", "Com_delete")

Reading = tuple[float, dict[str, float]]
SETTLE_S, SETTLE_EVERY_S = 2.0, 0.1  # the closing reading's wait for the sessions to end
LATE = 1.25  # intervals after the last reading: a reading of its own, when no line came


class CounterSampler:
    """The target's counters read every `interval_s` until stopped, then once more, so the
    last reading follows sysbench's last transaction; a thread of its own connects.

    A reading is taken when the worker is awake for an interval line (`awake`), half an
    interval or more after the last reading, or a quarter of an interval late when none
    came: a stalled benchmark is still sampled.

    Where a reading is one statement (ReadsLater: MySQL and MariaDB without InnoDB
    monitor figures or performance_schema timers), the thread hands its connection to the
    worker after the first reading and sleeps until the end: the worker sends the
    statement while it is awake for a line and reads the answer at its next wake, so no
    thread wakes for it and nobody waits on the server (the thread's two wake-ups were
    most of a reading's cost); with no line, the worker wakes for the reading when it is
    due (`due_at`). The thread takes the connection back for the closing reading. Other
    readings (PostgreSQL's, several statements) are taken by the thread, nudged by the
    worker."""

    def __init__(
        self, *, run_id: int, connection: Connection, interval_s: float, engine: str = ""
    ) -> None:
        self.run_id = run_id
        self.engine = engine
        self.connection = connection
        self.interval_s = interval_s
        self.readings: list[Reading] = []
        self.error = ""
        self.fsync_timing: dict[str, Any] = {}  # FsyncTiming.to_dict(): readable, or why not
        self.inside: dict[str, Any] = {}  # readable, and the snapshots "first" and "last"
        self.waits: WaitSampler | None = None  # PostgreSQL's waits in progress
        self._taken = 0
        self._stop = threading.Event()
        self._nudged = threading.Event()
        self._handed: ReadsLater | None = None  # the connection, while the worker reads
        self._sent_at: float | None = None  # when the reading on its way was sent
        self._last = 0.0  # when the last reading was taken or sent
        self._due = 0.0  # when the worker reads, should no line wake it first
        self._started = self._stopped_at = time.monotonic()
        self._thread = threading.Thread(
            target=self._loop, name=f"counters-run-{run_id}", daemon=True
        )

    def start(self) -> CounterSampler:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def awake(self, *, line: bool) -> None:
        """The worker is awake, for an interval line (`line`) or at the end of a wait: a
        reading due about now is taken at once (sent now and its answer read at the next
        wake, where the worker reads), instead of waking the worker's process again for
        it a moment later."""
        if self._handed is not None:
            self._read_handed(self._handed, line)
        elif line:
            self._nudged.set()

    def due_at(self) -> float | None:
        """When the worker must wake for a reading should no line wake it first
        (time.monotonic()); None while the thread reads on its own."""
        return None if self._handed is None else self._due

    def _read_handed(self, db: ReadsLater, line: bool) -> None:
        """In the worker's thread: the answer to the reading sent at its last wake, if it
        has come, and the next reading sent when it is due. A failure ends the readings,
        never the benchmark."""
        now = time.monotonic()
        try:
            if self._sent_at is not None:
                if not db.reading_ready():  # not answered yet: at the next wake
                    self._due = max(self._due, now + self.interval_s)
                    return
                self._add(db.receive_reading(), self._sent_at)
                self._sent_at = None
            if now - self._last >= self.interval_s * (0.5 if line else LATE):
                db.send_reading()
                self._sent_at = self._last = now
                self._due = now + LATE * self.interval_s
        except Exception as e:  # a reading lost must never fail the benchmark
            self._handed, self._sent_at = None, None
            self.error = e.message if isinstance(e, targets.TargetError) else f"internal error: {e}"
            logger.warning("run %s: counters no longer sampled: %s", self.run_id, self.error)

    def stop(self) -> list[Reading]:
        self._stopped_at = time.monotonic()
        self._stop.set()
        self._nudged.set()
        # A reading takes milliseconds; the connect timeout bounds a server gone mute.
        self._thread.join(timeout=settings.BENCHDASH_TARGET_TIMEOUT * 7)
        if self._thread.is_alive():
            self.error = self.error or "the counter sampler did not stop in time"
        return list(self.readings)

    def _loop(self) -> None:
        try:
            with targets.connect(self.connection, timeout=settings.BENCHDASH_TARGET_TIMEOUT) as db:
                self.fsync_timing = db.fsync_timing().to_dict()
                self._inside_readable(db)
                self._sample_until_stopped(db)
        except targets.TargetError as e:
            self.error = self.error or e.message  # the worker's, when it failed first
            logger.warning("run %s: counters not sampled: %s", self.run_id, e.message)
        except Exception as e:  # a reading lost must never fail the benchmark
            self.error = f"internal error: {e}"
            logger.exception("run %s: the counter sampler failed", self.run_id)

    def _sample_until_stopped(self, db: targets.ServerTarget) -> None:
        self._read(db)
        self._inside_at(db, "first")
        # Stopped already (sysbench ended while the thread connected): no closing reading,
        # which could be timed before the first, as in the loop below.
        if isinstance(db, ReadsLater) and db.reads_later() and not self._stop.is_set():
            self._hand_over(db)
            self._read(db, settled_counters(db, self.readings), self._stopped_at)
        while not self._stop.is_set():
            self._wait_for_next()
            if self._stop.is_set():  # the closing reading, timed when sysbench ended
                self._read(db, settled_counters(db, self.readings), self._stopped_at)
            else:
                self._read(db)
        self._inside_at(db, "last")

    def _inside_readable(self, db: targets.ServerTarget) -> None:
        try:
            self.inside["readable"] = db.inside_readable().to_dict()
        except targets.TargetError as e:
            self.inside["readable"] = {"readable": False, "reason": e.message, "fix": ""}

    def _inside_at(self, db: targets.ServerTarget, which: str) -> None:
        """A snapshot of the server's own accounting; a refusal loses it, not the run."""
        if not self.inside.get("readable", {}).get("readable"):
            return
        try:
            self.inside[which] = db.inside_snapshot()
        except targets.TargetError as e:
            self.inside["readable"] = {"readable": False, "reason": e.message, "fix": ""}

    def _hand_over(self, db: ReadsLater) -> None:
        """The worker reads until the run ends (`awake`); then the thread takes the
        connection back, with the answer to a reading still on its way."""
        self._last = time.monotonic()
        self._due = self._last + LATE * self.interval_s
        self._handed = db
        self._stop.wait()
        self._handed = None
        if self._sent_at is not None:
            self._add(db.receive_reading(), self._sent_at)
            self._sent_at = None

    def _wait_for_next(self) -> None:
        """Until the next reading is due: a nudge half an interval or more after the last
        reading, the stop, or a quarter of an interval past due without a nudge."""
        last = time.monotonic()
        while not self._stop.is_set():
            left = last + LATE * self.interval_s - time.monotonic()
            if not self._nudged.wait(max(0.0, left)):
                return  # no line came: read on our own
            self._nudged.clear()
            if time.monotonic() - last >= self.interval_s / 2:
                return

    def _read(
        self, db: targets.ServerTarget, values: dict[str, float] | None = None, at: float = 0.0
    ) -> None:
        values = values if values is not None else db.status_counters()
        self._add(values, at or time.monotonic())

    def _add(self, values: dict[str, float], at: float) -> None:
        # list.append is atomic: no lock needed
        self.readings.append((round(at - self._started, 3), values))

    def take(self) -> list[tuple[int, float, dict[str, float]]]:
        """The readings since the last call, numbered from 1: (seq, time_s, values)."""
        count = len(self.readings)
        new = [(i + 1, *self.readings[i]) for i in range(self._taken, count)]
        self._taken = count
        return new


def settled_counters(db: targets.ServerTarget, readings: Sequence[Reading]) -> dict[str, float]:
    """The closing reading, once sysbench's sessions have ended.

    PostgreSQL adds a session's work to its statistics at most once a second and when the
    session ends. Read at once, a 6 s run missed the last second of its WAL syncs (0.82 a
    transaction where strace counted 1.00). So the reading waits, up to SETTLE_S, until
    the database's sessions are back to their fewest during the run and two readings
    SETTLE_EVERY_S apart agree. MySQL and MariaDB count at once: read once."""
    values = db.status_counters()
    if "backends_total" not in values:
        return values
    fewest = min((v.get("backends_total", 0.0) for _, v in readings), default=0.0)
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        time.sleep(SETTLE_EVERY_S)
        again = db.status_counters()
        if again == values and again["backends_total"] <= fewest:
            break
        values = again
    return values


def sampler_start(*, run: Run, batch: Batch, target: Target | None = None) -> CounterSampler | None:
    """Start sampling for a run that just started, on `target` (the batch's own by
    default); None when there is nothing to sample (no target, a test that is not a
    database test, or sampling turned off)."""
    plan = FrozenPlan.from_params(batch.params)
    target = target or batch.target
    if not settings.BENCHDASH_COUNTERS or target is None:
        return None
    if not is_sql_test(plan.test):
        return None
    connection = targets.connection_of(target)
    sampler = CounterSampler(
        run_id=run.pk, connection=connection, interval_s=_interval(run, plan),
        engine=target.engine,
    )  # fmt: skip
    if target.engine == "postgresql" and settings.BENCHDASH_WAIT_SAMPLE_S > 0:
        sampler.waits = WaitSampler(
            run_id=run.pk,
            connect=lambda: targets.connect(connection, timeout=settings.BENCHDASH_TARGET_TIMEOUT),
            interval_s=settings.BENCHDASH_WAIT_SAMPLE_S,
        ).start()
    return sampler.start()


def sampler_stop(sampler: CounterSampler | None) -> list[tuple[int, float, dict[str, float]]]:
    """Stop sampling once sysbench ended; the readings not taken yet."""
    if sampler is None:
        return []
    if sampler.waits is not None:  # its session ends before the closing reading
        sampler.inside["waits"] = sampler.waits.stop()
    sampler.stop()
    return sampler.take()


def sampler_summary(sampler: CounterSampler | None, *, run: Run) -> None:
    """The run's counter deltas and ratios, on `run.counters` (stored with its result)."""
    if sampler is not None:
        summary = counters_summary(sampler.readings, run.reports, error=sampler.error)
        run.counters = summary
        # the why panel names the file classes by it (the WAL, or redo log and binary log)
        run.counters["engine"] = sampler.engine
        # why the why panel has no fsync latency, when it has none (runs/analysis/why/panel.py)
        run.counters["fsync_timing"] = sampler.fsync_timing
        # the server's own accounting over the run: waits, digests, the sampled waits
        run.counters["inside"] = inside_summary(
            sampler.inside,
            transactions=RunCounters.load(summary).transactions,
            duration_s=float(summary.get("duration_s") or 0),
        )
        if sampler.readings:  # which of the counters read this server does not have
            reported = {name for _, values in sampler.readings for name in values}
            run.counters["missing"] = targets.missing_counters(sampler.engine, reported)


def _interval(run: Run, plan: FrozenPlan) -> float:
    # the run's own option over the plan's
    options = RunOptions.load({"report-interval": plan.report_interval, **run.options})
    interval = options.report_interval or 0.0
    return interval if interval > 0 else 1.0


def counters_summary(
    readings: Sequence[Reading], reports: Sequence[Mapping[str, Any]], *, error: str = ""
) -> dict[str, Any]:
    """Deltas of the cumulative counters between the first and last readings, their
    rates, the gauges' mean and peak, and ratios against sysbench's own counts."""
    summary: dict[str, Any] = {"readings": len(readings), "error": error}
    if len(readings) < 2:
        return summary
    (t0, first), (t1, last) = readings[0], readings[-1]
    duration = t1 - t0
    deltas = {
        k: last[k] - first[k]
        for k in last
        if k in first and k not in GAUGES and not k.endswith("_per_wait")
    }
    summary.update(
        duration_s=round(duration, 3),
        deltas=deltas,
        per_second={k: round(v / duration, 3) for k, v in deltas.items()} if duration > 0 else {},
        gauges=_gauges(readings),
        derived=_derived(deltas, reports),
    )
    return summary


def _gauges(readings: Sequence[Reading]) -> dict[str, dict[str, float]]:
    names = {k for _, values in readings for k in values if k in GAUGES}
    gauges = {}
    for name in sorted(names):
        series = [values[name] for _, values in readings if name in values]
        gauges[name] = {"avg": round(sum(series) / len(series), 3), "max": max(series)}
    return gauges


def _derived(deltas: Mapping[str, float], reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-query and per-transaction figures. sysbench resets its counts at each
    checkpoint, so the run's totals are the sums over all its reports."""
    queries = sum(float(r.get("sql", {}).get("queries", 0)) for r in reports)
    transactions = sum(float(r.get("sql", {}).get("transactions", 0)) for r in reports)
    if not queries and all(k in deltas for k in _QUERY_COUNTERS):
        queries = sum(deltas[k] for k in _QUERY_COUNTERS)
    derived: dict[str, Any] = {"queries": queries, "transactions": transactions}
    # each thread's time in its transactions (sysbench's fairness) over the run's time:
    # 1 at full speed, a small share for a run held to a --rate (fsyncs.py: the pause)
    executing = sum(float((r.get("fairness") or {}).get("exec_time_avg") or 0) for r in reports)
    total = sum(float((r.get("general") or {}).get("total_time_s") or 0) for r in reports)
    if executing and total:
        derived["busy"] = round(executing / total, 4)
    for name, candidates, per in _RATIOS:
        counter = next((c for c in candidates if c in deltas), None)
        if counter is not None and per == "query" and queries:
            derived[name] = round(deltas[counter] / queries, 4)
            derived[f"{name}_from"] = counter
        elif counter is not None and per == "transaction" and transactions:
            derived[name] = round(deltas[counter] / transactions, 4)
            derived[f"{name}_from"] = counter
    return derived


# derived figure, the counters that give it (the first the server has), and what it is per.
# MySQL and older MariaDB count InnoDB's rows read and log fsyncs; MariaDB 10.8+ dropped
# those, and counts rows read server-wide and log fsyncs among Innodb_data_fsyncs.
_RATIOS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("rows_read_per_query", ("Innodb_rows_read", "Rows_read", "db_tup_fetched"), "query"),
    ("tuples_returned_per_query", ("db_tup_returned",), "query"),
    (
        "log_fsyncs_per_transaction",
        ("Innodb_os_log_fsyncs", "Innodb_data_fsyncs", "wal_sync"),
        "transaction",
    ),
    ("data_fsyncs_per_transaction", ("Innodb_data_fsyncs",), "transaction"),
    ("wal_bytes_per_transaction", ("wal_bytes",), "transaction"),
    ("binlog_commits_per_transaction", ("Binlog_commits",), "transaction"),
)
