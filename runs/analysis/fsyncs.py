"""A run's and a cell's fsyncs by file class: the redo log (InnoDB's redo, PostgreSQL's
WAL), the binary log and the data files; for each, how many per transaction and how long
one takes, with where that time came from.

Each class is timed by the first source the server in hand has for that class, never by
another class's timer (a data file's sync is not a redo-log sync: on MariaDB 10.8+, whose
performance_schema has no redo-log row, borrowing the data files' 0.1 ms for the redo
log's fsyncs made the why panel wrong):

- the server's own timer of that class: performance_schema's file_summary_by_event_name
  (innodb_log_file, binlog, innodb_data_file) on MySQL/MariaDB, pg_stat_wal's
  wal_sync_time (track_wal_io_timing on) on PostgreSQL;
- else the sync probe on the server host: the median time of an fdatasync after a write
  of the log's block size, on the log's own file system, sampled a few times a second
  over the measured interval (runs/loadhosts/sync_probe.py); not a bound: measured within
  25 % of strace on the server's own redo-log and WAL syncs (docs/host-metrics.md);
- else the server host's /proc/diskstats: the device's time per cache flush (kernels 5.5
  and later). It is the last step of an fsync only, after the data and the file system's
  journal are written: a lower bound, said so wherever it is shown.

A cell's figure per class is the median of its runs': one figure per cell and class on
every page. Pure: no Django, no I/O.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runs.analysis.budget import binlog_fsyncs
from runs.analysis.verdicts import TIMES
from runs.columns import RunCounters

REDO, BINLOG, DATA = "redo", "binlog", "data"
CLASSES = (REDO, BINLOG, DATA)
NAMES = {REDO: "redo log", BINLOG: "binary log", DATA: "data file"}
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
    REDO: (
        ("pfs_log_file_syncs", "pfs_log_file_sync_ps", PS_PER_MS),
        ("wal_sync", "wal_sync_time", 1.0),
    ),
    BINLOG: (("pfs_binlog_syncs", "pfs_binlog_sync_ps", PS_PER_MS),),
    DATA: (("pfs_data_file_syncs", "pfs_data_file_sync_ps", PS_PER_MS),),
}
SOURCE_OF = {"pfs": PFS, "wal": PG_WAL}
MATERIAL = 0.05  # fsyncs per transaction below which a class costs nothing worth timing


@dataclass(frozen=True)
class ClassFsync:
    """One file class: fsyncs per transaction and ms per fsync (None: not counted or not
    timed), where the time came from, and whether it is only a lower bound."""

    per_tx: float | None = None
    ms: float | None = None
    source: str = ""
    lower_bound: bool = False

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
        }


@dataclass(frozen=True)
class Fsyncs:
    """A run's or a cell's fsyncs by class."""

    classes: dict[str, ClassFsync]

    def get(self, name: str) -> ClassFsync:
        return self.classes.get(name) or ClassFsync()

    @property
    def per_tx(self) -> float | None:
        counted = [c.per_tx for c in self.classes.values() if c.per_tx is not None]
        return sum(counted) if counted else None

    def material(self) -> list[str]:
        """The classes that fsync often enough to matter."""
        return [n for n in CLASSES if (self.get(n).per_tx or 0) >= MATERIAL]

    def text(self) -> str:
        """The classes that matter, each as its fsyncs per transaction times its time per
        fsync, with the source of that time."""
        parts = [
            f"{NAMES[n]} {self.get(n).per_tx or 0:.2f}/trx {TIMES} {self.get(n).latency_text()}"
            for n in self.material()
        ]
        return "; ".join(parts) or "no fsync per transaction"

    def to_dict(self) -> dict[str, Any]:
        return {name: self.get(name).to_dict() for name in CLASSES}


@dataclass(frozen=True)
class HostSync:
    """The server host's own time per fsync, for a class its server does not time."""

    ms: float
    source: str  # PROBE or DISKSTATS
    lower_bound: bool


def host_sync(host_summary: Mapping[str, Any] | None) -> HostSync | None:
    """The sync probe's median time per fsync over the run, else the device's time per
    cache flush (a lower bound), from the server host's entry of `Run.host_summary`
    (runs/analysis/host_metrics/host_summary.py); None when neither was measured."""
    for host in (host_summary or {}).get("hosts") or []:
        if isinstance(host, Mapping) and host.get("role") == "server":
            probe = host.get("sync_probe") or {}
            if isinstance(probe, Mapping) and _positive(probe.get("ms")):
                return HostSync(float(probe["ms"]), PROBE, False)
            if _positive(host.get("flush_ms")):
                return HostSync(float(host["flush_ms"]), DISKSTATS, True)
    return None


def crowded(host_summary: Mapping[str, Any] | None) -> str:
    """A caveat when the sync probe timed a run whose server host had more tasks ready to
    run than cores: there the server's own syncs took 2 to 25 times the probe's (measured
    against strace, docs/host-metrics.md), likely waiting for a CPU after their I/O; ""
    otherwise."""
    for host in (host_summary or {}).get("hosts") or []:
        if not (isinstance(host, Mapping) and host.get("role") == "server"):
            continue
        probe = host.get("sync_probe") or {}
        runq, ncpu = host.get("runq") or 0, host.get("ncpu") or 0
        timed = isinstance(probe, Mapping) and _positive(probe.get("ms"))
        if timed and _positive(runq) and _positive(ncpu) and runq > ncpu:
            return (
                f"the server host's run queue ({runq:.1f}) was above its {ncpu} cores: the "
                "sync probe's time is the disk's, the server's own syncs likely waited "
                "longer for a CPU"
            )
    return ""


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and value > 0


def run_fsyncs(counters: RunCounters, host: HostSync | None = None) -> Fsyncs:
    """A run's fsyncs by class, from its counters and its server host's own time per
    fsync (`host_sync`) for the classes the server does not time."""
    deltas = counters.deltas
    counts = {REDO: _redo_count(deltas), BINLOG: _binlog_count(counters), DATA: _data_count(deltas)}
    classes = {}
    for name in CLASSES:
        count, per_tx = counts[name], None
        if count is not None and counters.transactions > 0:
            per_tx = count / counters.transactions
        ms, source = _timed(deltas, name)
        lower = False
        if ms is None and host is not None:
            ms, source, lower = host.ms, host.source, host.lower_bound
            # The probe overwrites a preallocated file, as the redo log and the data
            # files are written; the binary log grows, and each of its syncs commits the
            # file system's journal too: for it the probe's time is only a bound.
            lower = lower or (name == BINLOG and source == PROBE)
        classes[name] = ClassFsync(per_tx, ms, source, lower)
    return Fsyncs(classes)


def _redo_count(deltas: Mapping[str, float]) -> float | None:
    for name in ("Innodb_os_log_fsyncs", "pfs_log_file_syncs", "wal_sync"):
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
    return Fsyncs({name: _median_class([f.get(name) for f in each]) for name in CLASSES})


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
    )


def _median(values: Iterable[float | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return statistics.median(known) if known else None
