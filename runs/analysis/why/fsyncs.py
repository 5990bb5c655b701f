"""A run's and a cell's fsyncs by file class, each named as its engine names it: InnoDB's
redo log, the binary log and the data files on MariaDB/MySQL; the WAL and the data files on
PostgreSQL (which has no binary log: no class of it is listed there). For each, how many
per transaction and how long one takes, with where that time came from.

Each class is timed by the first source the server in hand has for that class, never by
another class's timer (a data file's sync is not a redo-log sync: on MariaDB 10.8+, whose
performance_schema has no redo-log row, borrowing the data files' 0.1 ms for the redo
log's fsyncs made the why panel wrong):

- the server's own timer of that class: performance_schema's file_summary_by_event_name
  (innodb_log_file, binlog, innodb_data_file) on MySQL/MariaDB, pg_stat_wal's
  wal_sync_time (track_wal_io_timing on) on PostgreSQL;
- else the sync probe on the server host: the median time of an fdatasync after a write
  of the log's block size, on the log's own file system, sampled a few times a second
  over the measured interval (runs/loadhosts/sync_probe.py), after a pause and at once
  after another, taken at the pace of the server's own syncs of that class
  (`HostSync.at_pace`); not a bound: measured against strace on the server's own
  redo-log and WAL syncs in docs/host-metrics.md;
- else the server host's /proc/diskstats: the device's time per cache flush (kernels 5.5
  and later). It is the last step of an fsync only, after the data and the file system's
  journal are written: a lower bound, said so wherever it is shown.

A cell's figure per class is the median of its runs': one figure per cell and class on
every page. Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runs.analysis.noise.verdicts import TIMES
from runs.analysis.why.budget import binlog_fsyncs
from runs.analysis.why.spread import CROWDED, PROBE_ACCURACY, cpu_wait_ms
from runs.columns import RunCounters

REDO, WAL, BINLOG, DATA = "redo", "wal", "binlog", "data"
CLASSES = (REDO, WAL, BINLOG, DATA)  # in the order they are said
NAMES = {REDO: "redo log", WAL: "WAL", BINLOG: "binary log", DATA: "data file"}
POSTGRESQL = "postgresql"  # Target.engine
PS_PER_MS = 1e9
PFS = "performance_schema"
PG_WAL = "pg_stat_wal"
DISKSTATS = "/proc/diskstats"
PROBE = "sync probe"
# A cell's runs may differ in what timed a class: the server's own timer first, then the
# probe, then the device's bound.
RANK = {PFS: 0, PG_WAL: 0, PROBE: 1, DISKSTATS: 2}
# class → (count, total time, time unit per ms) of the server's own timer
TIMERS: dict[str, tuple[tuple[str, str, float], ...]] = {
    REDO: (("pfs_log_file_syncs", "pfs_log_file_sync_ps", PS_PER_MS),),
    WAL: (("wal_sync", "wal_sync_time", 1.0),),
    BINLOG: (("pfs_binlog_syncs", "pfs_binlog_sync_ps", PS_PER_MS),),
    DATA: (("pfs_data_file_syncs", "pfs_data_file_sync_ps", PS_PER_MS),),
}
SOURCE_OF = {"pfs": PFS, "wal": PG_WAL}
MATERIAL = 0.05  # fsyncs per transaction below which a class costs nothing worth timing
STREAM_GAP_MS, IDLE_GAP_MS = 0.2, 10.0  # HostSync.at_pace: a sync's pause before it


def engine_classes(engine: str) -> tuple[str, ...]:
    """The file classes an engine has (`RunCounters.engine`): its log (the WAL, or InnoDB's
    redo log), the binary log on MariaDB/MySQL only, and its data files."""
    return (WAL, DATA) if engine == POSTGRESQL else (REDO, BINLOG, DATA)


@dataclass(frozen=True)
class ClassFsync:
    """One file class: fsyncs per transaction and ms per fsync (None: not counted or not
    timed), where the time came from, and whether it is only a lower bound."""

    per_tx: float | None = None
    ms: float | None = None
    source: str = ""
    lower_bound: bool = False
    # how low and how high the time of one may be: the source's spread (and the host's
    # load, for a time the server did not take itself); inf: no bound above
    low_ms: float | None = None
    high_ms: float | None = None

    @property
    def low(self) -> float | None:
        return self.ms if self.low_ms is None else self.low_ms

    @property
    def high(self) -> float | None:
        if self.high_ms is not None:
            return self.high_ms
        return math.inf if self.lower_bound and self.ms is not None else self.ms

    @property
    def cost_ms(self) -> float | None:
        if self.per_tx is None or self.ms is None:
            return None
        return self.per_tx * self.ms

    def latency_text(self) -> str:
        if self.ms is None:
            return "not timed"
        bound = "≥ " if self.lower_bound else ""
        return f"{bound}{self.ms:.3f} ms ({self.source})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "per_tx": self.per_tx,
            "ms": self.ms,
            "source": self.source,
            "lower_bound": self.lower_bound,
            "low_ms": self.low,
            "high_ms": None if self.high == math.inf else self.high,
        }


@dataclass(frozen=True)
class Fsyncs:
    """A run's or a cell's fsyncs by class: the classes its engine has, and no other."""

    classes: dict[str, ClassFsync]

    def get(self, name: str) -> ClassFsync:
        return self.classes.get(name) or ClassFsync()

    @property
    def names(self) -> list[str]:
        """The classes this engine has, in the order they are said."""
        return [n for n in CLASSES if n in self.classes]

    @property
    def per_tx(self) -> float | None:
        counted = [c.per_tx for c in self.classes.values() if c.per_tx is not None]
        return sum(counted) if counted else None

    def material(self) -> list[str]:
        """The classes that fsync often enough to matter."""
        return [n for n in self.names if (self.get(n).per_tx or 0) >= MATERIAL]

    def text(self) -> str:
        """The classes that matter, each as its fsyncs per transaction times its time per
        fsync, with the source of that time."""
        parts = [
            f"{NAMES[n]} {self.get(n).per_tx or 0:.2f}/trx {TIMES} {self.get(n).latency_text()}"
            for n in self.material()
        ]
        return "; ".join(parts) or "no fsync per transaction"

    def to_dict(self) -> dict[str, Any]:
        return {name: self.get(name).to_dict() for name in self.names}


@dataclass(frozen=True)
class HostSync:
    """The server host's own time per fsync, for a class its server does not time; and,
    from the sync probe, the time of a log write that waits for the device."""

    ms: float
    source: str  # PROBE or DISKSTATS
    lower_bound: bool
    streamed_ms: float | None = None  # the probe's sync at once after another
    write_ms: float | None = None  # the probe's write before its sync, after a pause
    streamed_write_ms: float | None = None  # and at once after another sync
    direct: bool = False  # the probe wrote with O_DIRECT, as the server writes its log
    # the probe's spread, as shares of its median: the low end of its 95 % interval, and
    # the higher of its high end and its mean (a model of mean times takes the tail too)
    low_share: float = 1.0
    high_share: float = 1.0
    cpu_wait_ms: float = 0.0  # the wait for a CPU a sync may add on a crowded host

    def spread(self, ms: float) -> tuple[float, float]:
        """How low and how high a time `ms` from this source may be for the server's own
        syncs: the probe's spread and its error against strace, and on a crowded host
        the wait for a CPU after the I/O; the device's bound has nothing above it."""
        if self.lower_bound:
            return ms, math.inf
        low = ms * self.low_share / PROBE_ACCURACY
        return low, ms * self.high_share * PROBE_ACCURACY + self.cpu_wait_ms

    def at_pace(self, pause_ms: float | None) -> float:
        """The time of one sync for a server whose syncs of a class each follow
        `pause_ms` of idle time (None: not known).

        A sync that finds its core asleep waits for it to wake, longer the deeper it
        slept: on this project's machine the probe's sync took 0.024 ms back to back and,
        after a pause of 0.2 / 0.5 / 1 / 2 / 5 / 10 / 50 ms, 0.027 / 0.056 / 0.077 /
        0.068 / 0.084 / 0.098 / 0.104 ms (docs/host-metrics.md). So the time moves from
        the streamed figure to the one after a pause as the log of the pause goes from
        STREAM_GAP_MS to IDLE_GAP_MS."""
        return _paced(self.ms, self.streamed_ms, pause_ms)

    def write_at_pace(self, pause_ms: float | None) -> float | None:
        """The time of one O_DIRECT log write, as `at_pace` takes a sync's."""
        if self.write_ms is None:
            return None
        return _paced(self.write_ms, self.streamed_write_ms, pause_ms)


def _paced(alone: float, streamed: float | None, pause_ms: float | None) -> float:
    if streamed is None or pause_ms is None:
        return alone
    gap = max(pause_ms, STREAM_GAP_MS)
    share = min(1.0, math.log(gap / STREAM_GAP_MS) / math.log(IDLE_GAP_MS / STREAM_GAP_MS))
    return streamed + share * (alone - streamed)


def host_sync(host_summary: Mapping[str, Any] | None) -> HostSync | None:
    """The sync probe's median time per fsync over the run, else the device's time per
    cache flush (a lower bound), from the server host's entry of `Run.host_summary`
    (runs/analysis/host_metrics/host_summary.py); None when neither was measured."""
    for host in (host_summary or {}).get("hosts") or []:
        if isinstance(host, Mapping) and host.get("role") == "server":
            probe = host.get("sync_probe") or {}
            if isinstance(probe, Mapping) and _positive(probe.get("ms")):
                ms = float(probe["ms"])
                high = max(_figure(probe.get(k)) or ms for k in ("ci_high_ms", "mean_ms"))
                return HostSync(
                    ms, PROBE, False,
                    streamed_ms=_figure(probe.get("streamed_ms")),
                    write_ms=_figure(probe.get("write_ms")),
                    streamed_write_ms=_figure(probe.get("streamed_write_ms")),
                    direct=probe.get("mode") == "direct",
                    low_share=min(1.0, (_figure(probe.get("ci_low_ms")) or ms) / ms),
                    high_share=max(1.0, high / ms),
                    cpu_wait_ms=cpu_wait_ms(host.get("runq"), host.get("ncpu")),
                )  # fmt: skip
            if _positive(host.get("flush_ms")):
                return HostSync(float(host["flush_ms"]), DISKSTATS, True)
    return None


def crowded(host_summary: Mapping[str, Any] | None) -> str:
    """A caveat when the sync probe timed a run whose server host had half as many tasks
    ready to run again as cores: there the server's own syncs took 2 to 25 times the
    probe's (3.8 to 8.9 runnable on 2 cores, measured against strace, docs/host-metrics.md),
    likely waiting for a CPU after their I/O; "" otherwise. Up to 2.4 runnable the two
    agreed, and a run at full speed keeps 2.2 to 2.4 busy on 2 cores by itself (sysbench,
    the server, the worker)."""
    for host in (host_summary or {}).get("hosts") or []:
        if not (isinstance(host, Mapping) and host.get("role") == "server"):
            continue
        probe = host.get("sync_probe") or {}
        runq, ncpu = host.get("runq") or 0, host.get("ncpu") or 0
        timed = isinstance(probe, Mapping) and _positive(probe.get("ms"))
        if timed and _positive(runq) and _positive(ncpu) and runq > CROWDED * ncpu:
            return (
                f"the server host's run queue ({runq:.1f}) was above its {ncpu} cores: the "
                "sync probe's time is the disk's, the server's own syncs likely waited "
                "longer for a CPU"
            )
    return ""


def _figure(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and value > 0


def run_fsyncs(counters: RunCounters, host: HostSync | None = None) -> Fsyncs:
    """A run's fsyncs by class, from its counters and its server host's own time per
    fsync (`host_sync`) for the classes the server does not time."""
    deltas, transactions = counters.deltas, counters.transactions  # a property: read once
    counts = {
        REDO: _redo_count(deltas),
        WAL: _wal_count(deltas),
        BINLOG: _binlog_count(counters),
        DATA: _data_count(deltas),
    }
    classes = {}
    for name in engine_classes(counters.engine):
        count, per_tx = counts[name], None
        if count is not None and transactions > 0:
            per_tx = count / transactions
        ms, source = _timed(deltas, name)
        lower, low, high = False, ms, ms  # the server's own mean: no spread in one run
        if ms is None and host is not None:
            ms = host.at_pace(_pause_ms(counters, count))
            source, lower = host.source, host.lower_bound
            # The probe overwrites a preallocated file, as the redo log and the data
            # files are written; the binary log grows, and each of its syncs commits the
            # file system's journal too: for it the probe's time is only a bound.
            lower = lower or (name == BINLOG and source == PROBE)
            low, high = host.spread(ms)
            high = math.inf if lower else high
        classes[name] = ClassFsync(per_tx, ms, source, lower, low, high)
    return Fsyncs(classes)


def run_log_writes(counters: RunCounters, host: HostSync | None) -> ClassFsync:
    """The redo log's writes per transaction that wait for the device, and the time of
    one (the sync probe's, at the server's pace); empty where the log's writes do not wait.

    MariaDB 10.8+ writes its redo log with O_DIRECT where the file system allows it: each
    write waits for the device, as a sync does. It writes the log once a transaction under
    innodb_flush_log_at_trx_commit=1, then syncs it, and twice under 2 (Innodb_log_writes
    1.00 and 2.00 a transaction; strace: pwrite64 0.042 ms, fdatasync 0.039 ms), so flush
    1 → 2 trades a sync for a write and saves little. A buffered write only copies into
    the page cache (its wait is in the sync that follows): not counted."""
    count = counters.deltas.get("Innodb_log_writes")
    if count is None or host is None or not host.direct or counters.transactions <= 0:
        return ClassFsync()
    ms = host.write_at_pace(_pause_ms(counters, count))
    if ms is None:
        return ClassFsync(count / counters.transactions)
    low, high = host.spread(ms)  # the probe's writes spread as its syncs do
    return ClassFsync(count / counters.transactions, ms, host.source, False, low, high)


def cell_log_writes(runs: Iterable[tuple[RunCounters, HostSync | None]]) -> ClassFsync:
    """A cell's log writes that wait for the device: the median over its runs."""
    return _median_class([run_log_writes(counters, host) for counters, host in runs])


def _pause_ms(counters: RunCounters, count: float | None) -> float | None:
    """The idle time before each of a class's `count` syncs over the run: the time between
    two of them, less the share of it sysbench's threads spent in a transaction (a run
    at full speed syncs after no pause; one held to a --rate, after most of the gap)."""
    if not count or counters.duration_s <= 0:
        return None
    apart_ms = 1000 * counters.duration_s / count
    busy = counters.busy
    return apart_ms * (1 - min(1.0, busy)) if busy is not None else apart_ms


def _wal_count(deltas: Mapping[str, float]) -> float | None:
    return float(deltas["wal_sync"]) if "wal_sync" in deltas else None


def _redo_count(deltas: Mapping[str, float]) -> float | None:
    for name in ("Innodb_os_log_fsyncs", "pfs_log_file_syncs"):
        if name in deltas:
            return float(deltas[name])
    if "Innodb_data_fsyncs" in deltas:
        # MariaDB 10.8+ counts its redo log's fsyncs among Innodb_data_fsyncs: the data
        # files' own, when performance_schema counted them, are taken out.
        return max(0.0, float(deltas["Innodb_data_fsyncs"]) - deltas.get("pfs_data_file_syncs", 0))
    return None


def _binlog_count(counters: RunCounters) -> float | None:
    # the budget's rule: performance_schema's count, else the group commits ÷ sync_binlog
    per_tx = binlog_fsyncs(counters)
    return None if per_tx is None else per_tx * counters.transactions


def _data_count(deltas: Mapping[str, float]) -> float | None:
    return float(deltas["pfs_data_file_syncs"]) if "pfs_data_file_syncs" in deltas else None


def _timed(deltas: Mapping[str, float], name: str) -> tuple[float | None, str]:
    for count_name, time_name, per_ms in TIMERS[name]:
        # A timer that is off still counts (PostgreSQL's wal_sync_time stays 0 without
        # track_wal_io_timing): no time, no figure.
        if deltas.get(count_name) and deltas.get(time_name):
            ms = float(deltas[time_name]) / per_ms / float(deltas[count_name])
            return ms, SOURCE_OF[count_name.split("_")[0]]
    return None, ""


def cell_fsyncs(runs: Iterable[tuple[RunCounters, HostSync | None]]) -> Fsyncs:
    """A cell's fsyncs by class: the median over its runs of each figure; `runs`: each
    run's counters and its host's time per fsync."""
    each = [run_fsyncs(counters, host) for counters, host in runs]
    names = [n for n in CLASSES if any(n in f.classes for f in each)]  # its engine's
    return Fsyncs({name: _median_class([f.get(name) for f in each]) for name in names})


def _median_class(classes: Sequence[ClassFsync]) -> ClassFsync:
    timed = [c for c in classes if c.ms is not None]
    # the best source any run had wins (the server's timer, the probe, the device's
    # bound), whatever the run: a cell has one figure per class, from one source
    best = min((RANK.get(c.source, 0) for c in timed), default=0)
    exact = [c for c in timed if RANK.get(c.source, 0) == best]
    return ClassFsync(
        per_tx=_median(c.per_tx for c in classes),
        ms=_median(c.ms for c in exact),
        source=exact[0].source if exact else "",
        lower_bound=bool(exact) and exact[0].lower_bound,
        # every run's spread: the runs' own figures and each one's interval
        low_ms=min((c.low for c in exact if c.low is not None), default=None),
        high_ms=max((c.high for c in exact if c.high is not None), default=None),
    )


def _median(values: Iterable[float | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return statistics.median(known) if known else None
