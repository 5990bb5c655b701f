"""A cell's budget per transaction: what each transaction cost the server, from the
status counters sampled during its runs and, when the server host was sampled, from its
telemetry (`Run.host_summary`); and, between two cells, what moved, in one sentence:

    flush=1 adds 1.0 fsync and 2.1 context switches per transaction; server CPU per
    transaction unchanged (41 → 42 µs); off-CPU time explains 88 % of the difference

The lines, each per transaction (divided by the run's steady throughput):
- server CPU, user and system: the database process's CPU-seconds per second ÷ tps;
- off-CPU time: the average latency L minus that CPU time c (the cell's L less its c). A
  sysbench thread runs one transaction at a time, and the server serves it with one
  thread (one connection), so of the L a transaction lasts, about c is spent on a CPU
  for it and L - c waiting: for an fsync, a lock, the network and the client, or for a
  CPU (the run queue). With T threads each thread still sees L per transaction, and c is
  the same per transaction, so the model holds at any thread count. It counts the
  server's background threads' CPU (log writer, purge) as the transactions' own: c is an
  upper bound of the transaction thread's CPU, L - c (never below zero) a lower bound of
  its waiting;
- context switches: the database process's voluntary and involuntary ones, and the
  whole server host's;
- I/Os: the server host's disk operations;
- bytes written: redo log (Innodb_os_log_written, pg_stat_wal's wal_bytes) and binary
  log (Binlog_bytes_written), from the counters;
- fsyncs, log and binary log: the log's from its counters; the binary log's from
  performance_schema when it is readable, else from the status counters: each binlog
  group commit writes it once and, under sync_binlog=N, syncs it every Nth time
  (Binlog_group_commits ÷ N; none under sync_binlog=0).

The time per transaction is the geometric mean over the cell's finished runs (as its
throughput, stats.ESTIMATOR); each other line is the median over them, with its lowest and
highest run: a line moved between two cells when the change is large enough to matter and the two
cells' ranges do not overlap (the noise between repeats is not a move).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.analysis.results import RunFigures
from runs.columns import DatabaseProcess, RunCounters

TIMES = "\u00d7"

# Counter deltas → per-transaction figures; the first counter the server has is used.
LOG_FSYNCS = ("Innodb_os_log_fsyncs", "pfs_log_file_syncs", "wal_sync", "Innodb_data_fsyncs")
LOG_BYTES = ("Innodb_os_log_written", "pfs_log_file_bytes_written", "wal_bytes")
BINLOG_BYTES = ("Binlog_bytes_written", "pfs_binlog_bytes_written")
BINLOG_GROUP_COMMITS = "Binlog_group_commits"
SYNC_BINLOG = "sync_binlog"  # the setting, sampled with the counters as a gauge

RELATIVE_MOVE = 0.10  # a line moved when it changed by a tenth or more...
ABSOLUTE_MOVE = {"fsyncs": 0.1, "switches": 0.2, "ios": 0.2, "cpu_us": 2.0}  # ...and this
SAME_TIME = 0.05  # time per transaction within 5 %: no difference to explain
NEEDS_TELEMETRY = "server CPU, off-CPU time, context switches and I/Os per transaction"

Range = tuple[float, float]
SUMS = {"fsyncs": ("log_fsyncs", "binlog_fsyncs"), "cpu_us": ("cpu_user_us", "cpu_system_us")}


@dataclass(frozen=True)
class Budget:
    """A cell's lines per transaction (None: not measured), with their range over runs."""

    time_us: float = 0.0  # average latency
    log_fsyncs: float | None = None
    binlog_fsyncs: float | None = None
    binlog_fsyncs_from: str = ""  # performance_schema, or the group commits
    log_bytes: float | None = None
    binlog_bytes: float | None = None
    cpu_user_us: float | None = None
    cpu_system_us: float | None = None
    off_cpu_us: float | None = None
    db_switches: float | None = None  # the database process's context switches
    host_switches: float | None = None  # the whole server host's
    ios: float | None = None
    missing: str = ""  # why the telemetry lines are empty
    ranges: dict[str, Range] = field(default_factory=dict)

    @property
    def fsyncs(self) -> float | None:
        parts = [v for v in (self.log_fsyncs, self.binlog_fsyncs) if v is not None]
        return sum(parts) if parts else None

    @property
    def cpu_us(self) -> float | None:
        if self.cpu_user_us is None or self.cpu_system_us is None:
            return None
        return self.cpu_user_us + self.cpu_system_us

    @property
    def switches(self) -> float | None:
        return self.db_switches if self.db_switches is not None else self.host_switches

    def to_dict(self) -> dict[str, Any]:
        found = {k: v for k, v in self.__dict__.items() if k != "ranges"}
        return {**found, "fsyncs": self.fsyncs, "cpu_us": self.cpu_us}


def cell_budget(runs: Sequence[RunFigures], time_ms: Callable[[RunFigures], float]) -> Budget:
    """The budget of a cell's finished runs (with counters); `time_ms`: a run's time per
    transaction."""
    lines: dict[str, list[float]] = {}
    for run in runs:
        for name, value in _run_lines(run, time_ms(run) * 1000).items():
            if value is not None:
                lines.setdefault(name, []).append(value)
    medians = {
        name: statistics.median(values) for name, values in lines.items() if name not in SUMS
    }
    # The time per transaction is the geometric mean over the runs, as the why row's
    # "ms / trx" (why.py reads it from here) and the throughput the ratio is made of; the
    # off-CPU time is that time less the CPU shown, so the three lines add up.
    time_us = statistics.geometric_mean(time_ms(r) * 1000 for r in runs) if runs else 0.0
    if "cpu_user_us" in medians and "cpu_system_us" in medians:
        medians["off_cpu_us"] = max(time_us - medians["cpu_user_us"] - medians["cpu_system_us"], 0)
    return Budget(
        time_us=time_us,
        binlog_fsyncs_from=_binlog_source(runs),
        missing="" if "cpu_user_us" in medians else _missing(runs),
        ranges={name: (min(values), max(values)) for name, values in lines.items()},
        **medians,
    )


def _run_lines(run: RunFigures, time_us: float) -> dict[str, float | None]:
    counters = run.server_counters
    lines = {
        "log_fsyncs": per_transaction(counters, LOG_FSYNCS),
        "binlog_fsyncs": binlog_fsyncs(counters),
        "log_bytes": per_transaction(counters, LOG_BYTES),
        "binlog_bytes": per_transaction(counters, BINLOG_BYTES),
    }
    lines |= _telemetry_lines(run, time_us)
    for total, parts in SUMS.items():  # a range of its own, for what moved
        if all(lines.get(p) is not None for p in parts):
            lines[total] = sum(lines[p] or 0.0 for p in parts)
    return lines


def per_transaction(counters: RunCounters, names: Sequence[str]) -> float | None:
    """The first of `names` the server counted, per transaction."""
    deltas = counters.deltas
    for name in names:
        if name in deltas:
            transactions = counters.transactions  # a property: read once (7 calls a run)
            return float(deltas[name]) / transactions if transactions > 0 else None
    return None


def binlog_fsyncs(counters: RunCounters) -> float | None:
    """The binary log's fsyncs per transaction: performance_schema's count when it was
    read, else the group commits under the sampled sync_binlog."""
    timed = per_transaction(counters, ("pfs_binlog_syncs",))
    if timed is not None:
        return timed
    every = (counters.gauges.get(SYNC_BINLOG) or {}).get("max")
    commits = per_transaction(counters, (BINLOG_GROUP_COMMITS,))
    if every is None or commits is None:
        return None
    return commits / float(every) if every else 0.0


def _binlog_source(runs: Iterable[RunFigures]) -> str:
    deltas = [r.server_counters.deltas for r in runs]
    if any("pfs_binlog_syncs" in d for d in deltas):
        return "performance_schema"
    if any(BINLOG_GROUP_COMMITS in d for d in deltas):
        return "Binlog_group_commits ÷ sync_binlog"
    return ""


def _telemetry_lines(run: RunFigures, time_us: float) -> dict[str, float | None]:
    server = run.host_figures.first("server")
    tps = run.throughput or 0.0
    if server is None or tps <= 0:
        return {}
    db = server.db or DatabaseProcess()
    lines: dict[str, float | None] = {
        "host_switches": _per(server.ctxt_s, tps),
        "ios": _per(server.iops, tps),
        "cpu_user_us": _per(db.user_cores, tps, 1e6),
        "cpu_system_us": _per(db.system_cores, tps, 1e6),
    }
    if db.vcsw_s is not None and db.nvcsw_s is not None:
        lines["db_switches"] = _per(db.vcsw_s + db.nvcsw_s, tps)
    if lines["cpu_user_us"] is not None and lines["cpu_system_us"] is not None:
        on_cpu = lines["cpu_user_us"] + lines["cpu_system_us"]
        lines["off_cpu_us"] = max(time_us - on_cpu, 0.0)
    return lines


def _per(value: Any, tps: float, scale: float = 1.0) -> float | None:
    return None if value is None else float(value) / tps * scale


def _missing(runs: Sequence[RunFigures]) -> str:
    for run in runs:
        for host in run.host_figures.missing:
            if host.role == "server" and host.why:
                return f"{NEEDS_TELEMETRY} need the server host's telemetry: {host.why}"
    return f"{NEEDS_TELEMETRY} need the server host's telemetry (none was recorded)"


# --- what moved between two cells ----------------------------------------------------------


def moved(label: str, base: Budget, other: Budget, measured: float | None = None) -> str:
    """What moved from `base` to `other` (labelled `label`), in one sentence; `measured`:
    the throughput ratio other / base, which a time per transaction said unchanged must
    not contradict unremarked."""
    parts = [_counted(label, base, other)]
    if base.cpu_us is None or other.cpu_us is None:
        parts.append(base.missing or other.missing)
        return "; ".join(parts)
    parts.append(_cpu(base, other))
    parts.append(_off_cpu(base, other, measured))
    return "; ".join(parts)


def _counted(label: str, base: Budget, other: Budget) -> str:
    adds: list[str] = []
    removes: list[str] = []
    for line, one, many in (
        ("fsyncs", "fsync", "fsyncs"),
        ("switches", "context switch", "context switches"),
        ("ios", "I/O", "I/Os"),
    ):
        change = _move(line, base, other)
        if change:
            words = f"{abs(change):.1f} {one if round(abs(change), 1) == 1 else many}"
            (adds if change > 0 else removes).append(words)
    if not adds and not removes:
        return f"{label} changes no fsync, context switch or I/O count per transaction"
    said = [f"adds {_and(adds)}"] if adds else []
    said += [f"removes {_and(removes)}"] if removes else []
    return f"{label} {' and '.join(said)} per transaction"


def _cpu(base: Budget, other: Budget) -> str:
    assert base.cpu_us is not None and other.cpu_us is not None
    figures = f"({base.cpu_us:.0f} → {other.cpu_us:.0f} µs)"
    change = _move("cpu_us", base, other)
    if not change:
        return f"server CPU per transaction unchanged {figures}"
    direction = "up" if change > 0 else "down"
    percent = abs(change) / base.cpu_us * 100
    return f"server CPU per transaction {direction} {percent:.0f} % {figures}"


def _off_cpu(base: Budget, other: Budget, measured: float | None = None) -> str:
    gap = other.time_us - base.time_us
    if abs(gap) < SAME_TIME * base.time_us or base.off_cpu_us is None:
        figures = f"({base.time_us:,.0f} → {other.time_us:,.0f} µs)"
        if measured is not None and abs(measured - 1) >= SAME_TIME:
            return (
                f"time per transaction unchanged {figures} although throughput moved "
                f"{measured:.2f}{TIMES}: the difference is not in the transactions' own "
                "time (the client, or how many ran at once)"
            )
        return f"time per transaction unchanged {figures}"
    share = ((other.off_cpu_us or 0.0) - base.off_cpu_us) / gap
    return f"off-CPU time explains {share * 100:.0f} % of the difference"


def _move(line: str, base: Budget, other: Budget) -> float:
    """The change of a line from base to other, or 0 when it did not move: too small, or
    within the noise between the cells' repeats."""
    before, after = getattr(base, line), getattr(other, line)
    if before is None or after is None:
        return 0.0
    change = after - before
    if abs(change) < ABSOLUTE_MOVE[line] or abs(change) < RELATIVE_MOVE * max(before, after):
        return 0.0
    low, high = _range(base, line), _range(other, line)
    if low and high and low[0] <= high[1] and high[0] <= low[1]:
        return 0.0  # the ranges of the repeats overlap
    return change


def _range(budget: Budget, line: str) -> Range | None:
    if line == "switches":
        line = "db_switches" if budget.db_switches is not None else "host_switches"
    return budget.ranges.get(line)


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
