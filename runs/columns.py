"""Typed readers of the JSON columns that code reads by key, besides a batch's params
(runs/frozen.py): a run's summary, counters, host summary, bottleneck; environment; nights.

Each is parsed once where code reaches the row (`BatchEnvironment.load(batch.environment)`)
and read by attribute after, so a key's name and its default for older or partial rows
live in one place. Missing keys and nulls read as empty; the facts inside (a host's
facts, a server's variables) stay plain dicts: their keys are the host's and the server's.

Pure: no Django, no I/O, nothing of runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def _dict(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def _number(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _integer(data: Mapping[str, Any], key: str) -> int | None:
    value = _number(data, key)
    return None if value is None else int(value)


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    return list(value) if isinstance(value, list) else []


@dataclass(frozen=True)
class RunSummary:
    """`Run.summary` (and a load host's part of a cell): the figures of sysbench's steady
    report (runs/analysis/summary.py) as numbers, None where the test has none."""

    tps: float | None = None
    qps: float | None = None
    eps: float | None = None  # events/s: cpu, threads, mutex
    errors: float | None = None  # ignored errors
    latency_pct: float | None = None  # which percentile, e.g. 95
    latency_pct_ms: float | None = None
    latency_avg_ms: float | None = None
    mib_per_s: float | None = None  # memory
    read_mib_per_s: float | None = None  # fileio
    written_mib_per_s: float | None = None
    interval_batch_means: list[float] = field(default_factory=list)
    interval_tps_median: float | None = None  # the median of the steady interval tps
    queue_length_max: int | None = None  # --rate only: the longest queue after the warmup
    queue_stall_max: int | None = None  # the longest queue held over two intervals
    queue_length_last: int | None = None
    queue_length_early_max: int | None = None  # the longest in the first half
    queue_length_before_last: int | None = None
    outcome: str = ""  # sysbench's: "ok", "forced_shutdown", "error", ...
    unfinished_transactions: int | None = None  # a forced shutdown's, when it said

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> RunSummary:
        data = data or {}
        numbers: dict[str, Any] = {n: _number(data, n) for n in _FIGURES if data.get(n) is not None}
        means = [float(v) for v in _list(data, "interval_batch_means")]
        counts: dict[str, Any] = {name: _integer(data, name) for name in _COUNTS}
        return cls(
            **numbers,
            **counts,
            interval_batch_means=means,
            interval_tps_median=_number(_dict(data, "interval_tps"), "median"),
            outcome=str(data.get("outcome") or ""),
        )

    @property
    def forced_shutdown(self) -> bool:
        return self.outcome == "forced_shutdown"

    @property
    def throughput(self) -> tuple[float | None, str]:
        """The headline rate and its unit: tps for SQL tests, events/s for cpu, threads
        and mutex, MiB/s for memory and fileio."""
        if self.tps is not None:
            return self.tps, "tps"
        if self.mib_per_s is not None:
            return self.mib_per_s, "MiB/s"
        if self.read_mib_per_s is not None or self.written_mib_per_s is not None:
            return (self.read_mib_per_s or 0) + (self.written_mib_per_s or 0), "MiB/s"
        if self.eps is not None:
            return self.eps, "events/s"
        return None, "tps"


# The summary's counts read as whole numbers, each a field of RunSummary.
_COUNTS = (
    "queue_length_max",
    "queue_stall_max",
    "queue_length_last",
    "queue_length_early_max",
    "queue_length_before_last",
    "unfinished_transactions",
)
# The summary's figures read as numbers, each a field of RunSummary.
_FIGURES = (
    "tps",
    "qps",
    "eps",
    "errors",
    "latency_pct",
    "latency_pct_ms",
    "latency_avg_ms",
    "mib_per_s",
    "read_mib_per_s",
    "written_mib_per_s",
)


@dataclass(frozen=True)
class BatchEnvironment:
    """`Batch.environment`: what a batch ran in, recorded before its first setting changed
    (runs/execution/environment.py), and the preflight it started with. `Run.environment`
    has its shape too, with only the server variables the run saw changed."""

    server_version: str = ""
    server_variables: dict[str, str] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)  # version, variables, engine details
    load_host: dict[str, Any] = field(default_factory=dict)  # the load host's facts
    server_host: dict[str, Any] = field(default_factory=dict)  # the database host's facts
    reference: dict[str, Any] = field(default_factory=dict)  # cores x 2 + disks
    preflight: dict[str, Any] = field(default_factory=dict)
    imported: dict[str, Any] = field(default_factory=dict)  # an imported log's header
    targets: dict[str, Any] = field(default_factory=dict)  # further targets' servers, by id
    # A run's own: the target it ran on (address, version), its config read back, and the
    # restart that started its server (runs/execution/environment.py run_record_server).
    target: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    restart: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> BatchEnvironment:
        data = data or {}
        server = _dict(data, "server")
        return cls(
            server_version=str(server.get("version") or ""),
            server_variables=_dict(server, "variables"),
            server=server,
            load_host=_dict(data, "load_host"),
            server_host=_dict(data, "server_host"),
            reference=_dict(data, "reference"),
            preflight=_dict(data, "preflight"),
            imported=_dict(data, "imported"),
            targets=_dict(data, "targets"),
            target=_dict(data, "target"),
            config=_dict(data, "config"),
            restart=_dict(data, "restart"),
        )

    @property
    def sysbench_version(self) -> str:
        """The load host's sysbench version, "unknown" before it was recorded."""
        return str(self.load_host.get("sysbench_version") or "unknown")


@dataclass(frozen=True)
class FsyncTimingRecord:
    """`Run.counters`' fsync_timing, as runs/targets/base.py `FsyncTiming.to_dict()` stored
    it: whether the server timed its fsyncs; when not, why and the fix. Runs from before it
    was recorded read as not known (not readable, no reason)."""

    readable: bool = False
    reason: str = ""
    fix: str = ""

    @classmethod
    def load(cls, data: Mapping[str, Any]) -> FsyncTimingRecord:
        fields = (str(data.get("reason") or ""), str(data.get("fix") or ""))
        return cls(bool(data.get("readable")), *fields)


@dataclass(frozen=True)
class RunCounters:
    """`Run.counters`: the server's counters over a run (runs/analysis/counters.py):
    cumulative counters as deltas, ratios derived from them, gauges as read."""

    deltas: dict[str, float] = field(default_factory=dict)
    derived: dict[str, Any] = field(default_factory=dict)
    gauges: dict[str, dict[str, float]] = field(default_factory=dict)  # name → avg, max
    fsync_timing: FsyncTimingRecord = field(default_factory=lambda: FsyncTimingRecord())
    missing: list[str] = field(default_factory=list)  # expected counters the server lacks
    inside: dict[str, Any] = field(default_factory=dict)  # waits, digests: analysis/inside.py
    duration_s: float = 0.0  # from the first reading to the last
    # the target's engine (Target.engine) as the sampler read it: its file classes are named
    # by it (the WAL on PostgreSQL; redo log and binary log on MariaDB/MySQL)
    engine: str = ""

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> RunCounters:
        data = data or {}
        deltas = _dict(data, "deltas")
        return cls(
            inside=_dict(data, "inside"),
            duration_s=_number(data, "duration_s") or 0.0,
            engine=str(data.get("engine") or _engine_of(deltas)),
            deltas=deltas,
            derived=_dict(data, "derived"),
            gauges=_dict(data, "gauges"),
            fsync_timing=FsyncTimingRecord.load(_dict(data, "fsync_timing")),
            missing=[str(name) for name in _list(data, "missing")],
        )

    @property
    def transactions(self) -> float:
        return float(self.derived.get("transactions") or 0)

    @property
    def busy(self) -> float | None:
        """The share of the run each sysbench thread spent in a transaction."""
        busy = self.derived.get("busy")
        return float(busy) if isinstance(busy, int | float) else None


def _engine_of(deltas: Mapping[str, Any]) -> str:
    """The engine of counters sampled before the sampler recorded it, by the names only one
    engine's sampler reads (pg_stat_wal's wal_*, pg_stat_database's db_*; SHOW GLOBAL
    STATUS's); "" when there is none."""
    if any(name.startswith(("wal_", "db_")) for name in deltas):
        return "postgresql"
    if any(name.startswith(("Innodb_", "Binlog_", "Com_", "pfs_")) for name in deltas):
        return "mysql"
    return ""


@dataclass(frozen=True)
class NightCheck:
    """`Batch.analysis` of a nightly batch: its verdict against the past nights
    (runs/services/nightly/history.py); other batches have none (status None)."""

    status: str | None = None
    summary: str | None = None
    rule: dict[str, Any] | None = None  # the rule the verdict applied, said and in figures
    cells: list[dict[str, Any]] = field(default_factory=list)  # each cell's checks

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> NightCheck:
        data = data or {}
        status, summary, rule = data.get("status"), data.get("summary"), data.get("rule")
        return cls(
            status=str(status) if status is not None else None,
            summary=str(summary) if summary is not None else None,
            rule=dict(rule) if isinstance(rule, Mapping) else None,
            cells=[dict(c) for c in _list(data, "cells") if isinstance(c, Mapping)],
        )


@dataclass(frozen=True)
class DatabaseProcess:
    """The database process's own use of the server host over a run, per second (cores
    busy, context switches) and per transaction (runs/analysis/host_metrics/host_summary.py)."""

    user_cores: float | None = None
    system_cores: float | None = None
    vcsw_s: float | None = None  # voluntary context switches
    nvcsw_s: float | None = None
    cpu_us_per_tx: float | None = None
    csw_per_tx: float | None = None  # its context switches per transaction
    # KB its own processes had the storage read and write per transaction (/proc/<pid>/io)
    read_kb_per_tx: float | None = None
    write_kb_per_tx: float | None = None
    io_why: str = ""  # why those are None: /proc/<pid>/io refused (another user's process)

    @classmethod
    def load(cls, data: Mapping[str, Any]) -> DatabaseProcess:
        why = data.get("io_why")
        return cls(
            **{name: _number(data, name) for name in _DB_FIGURES},
            io_why=str(why) if why else "",
        )


_DB_FIGURES = ("user_cores", "system_cores", "vcsw_s", "nvcsw_s", "cpu_us_per_tx", "csw_per_tx",
               "read_kb_per_tx", "write_kb_per_tx")  # fmt: skip


# HostFigures's figures read as they are named in the host summary
_HOST_FIGURES = ("busy_pct", "runq", "iops", "mbs", "util_pct", "rx_kbs", "tx_kbs", "ctxt_s",
                 "ctxt_per_tx", "read_kb_per_tx", "write_kb_per_tx", "sysbench_pct",
                 "others_pct")  # fmt: skip


@dataclass(frozen=True)
class HostFigures:
    """One host of `Run.host_summary`'s hosts (`host_entry` of
    runs/analysis/host_metrics/host_summary.py): the figures the results page, the budget
    and the exports read, None where unmeasured."""

    role: str = ""  # "server" or "load"
    host: str = ""
    busy_pct: float | None = None
    iowait_pct: float | None = None
    user_pct: float | None = None
    system_pct: float | None = None
    ncpu: int = 0  # cores; 0 when not read
    runq: float | None = None  # run queue
    iops: float | None = None
    mbs: float | None = None
    util_pct: float | None = None  # the busiest disk's utilisation
    rx_kbs: float | None = None  # network, KB/s
    tx_kbs: float | None = None
    ctxt_s: float | None = None  # the host's context switches per second
    ctxt_per_tx: float | None = None
    read_kb_per_tx: float | None = None  # the disks' KB read per transaction
    write_kb_per_tx: float | None = None
    db: DatabaseProcess | None = None  # server host only, when its process was found
    sysbench_pct: float | None = None  # sysbench's own CPU, % of all cores (its load host)
    others_pct: float | None = None  # other processes' share over the run
    seconds: int | None = None  # the seconds of the run its rows cover
    run_s: int | None = None  # how long sysbench ran; None before coverage was counted

    @classmethod
    def load(cls, data: Mapping[str, Any]) -> HostFigures:
        db, cpu = data.get("db"), _dict(data, "cpu")
        return cls(
            role=str(data.get("role") or ""),
            host=str(data.get("host") or ""),
            iowait_pct=_number(cpu, "iowait"),
            user_pct=_number(cpu, "user"),
            system_pct=_number(cpu, "system"),
            ncpu=_integer(data, "ncpu") or 0,
            **{name: _number(data, name) for name in _HOST_FIGURES},
            seconds=_integer(data, "seconds"),
            run_s=_integer(data, "run_s"),
            db=DatabaseProcess.load(db) if isinstance(db, Mapping) and db else None,
        )

    @property
    def cpu_us_per_tx(self) -> float | None:
        """The database process's CPU per transaction, in µs."""
        return self.db.cpu_us_per_tx if self.db else None


@dataclass(frozen=True)
class MissingHost:
    """A host of a run without metrics, and why (runs/execution/host_metrics.py)."""

    role: str = ""
    host: str = ""
    why: str = ""

    @property
    def name(self) -> str:
        return f"{self.role} {self.host}"


@dataclass(frozen=True)
class HostSummary:
    """`Run.host_summary`: what each sampled machine did over the run's steady state, and
    why any other host has no figures. Runs from before host metrics read as empty."""

    hosts: list[HostFigures] = field(default_factory=list)
    missing: list[MissingHost] = field(default_factory=list)

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> HostSummary:
        data = data or {}
        return cls(
            hosts=[HostFigures.load(h) for h in _list(data, "hosts") if isinstance(h, Mapping)],
            missing=[
                MissingHost(
                    str(m.get("role") or ""), str(m.get("host") or ""), str(m.get("why") or "")
                )
                for m in _list(data, "missing")
                if isinstance(m, Mapping)
            ],
        )

    def of_role(self, role: str) -> list[HostFigures]:
        return [h for h in self.hosts if h.role == role]

    def first(self, role: str) -> HostFigures | None:
        """The first host of the role: a cell has one server host, its first load host."""
        return next(iter(self.of_role(role)), None)


@dataclass(frozen=True)
class Bottleneck:
    """`Run.bottleneck` (`bottleneck_classify` of runs/analysis/host_metrics/bottleneck.py):
    what limited the run, its evidence and guards; a run not classified has no kind ("")."""

    kind: str = ""
    evidence: list[str] = field(default_factory=list)
    client_bound: bool = False  # the load host set the pace: figures measure the client
    same_machine: bool = False  # sysbench shared the database server's machine
    busy_start: str = ""  # another process used a host's CPU before sysbench started

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> Bottleneck:
        data = data or {}
        return cls(
            kind=str(data.get("kind") or ""),
            evidence=[str(e) for e in _list(data, "evidence")],
            client_bound=bool(data.get("client_bound")),
            same_machine=bool(data.get("same_machine")),
            busy_start=str(data.get("busy_start") or ""),
        )


@dataclass(frozen=True)
class RunOptions:
    """`Run.options` (a cell's, a plan's): sysbench options, name → value as it takes them.
    Those code reads by name are fields, read as the run passes them; `values` has all."""

    rate: int | None = None  # --rate: transactions per second offered; None: as fast as it can
    histogram: str = "on"  # --histogram, as given ("off", "false", "0" turn it off)
    report_interval: float | None = None  # --report-interval; None: the plan's
    values: dict[str, Any] = field(default_factory=dict)
    script_options: dict[str, Any] = field(default_factory=dict)  # a plan's: its script's

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> RunOptions:
        data = data or {}
        interval, scripted = data.get("report-interval"), data.get("script_options")
        return cls(
            rate=_whole(data.get("rate")),
            histogram=str(data.get("histogram", "on")),
            report_interval=None if "report-interval" not in data else _float(interval),
            values=dict(data),
            script_options=dict(scripted) if isinstance(scripted, Mapping) else {},
        )


def _whole(value: Any) -> int | None:
    """An option's whole number as sysbench reads it ("100" or 100), None when unset or 0."""
    number = _float(value)
    return int(number) if number else None


def _float(value: Any) -> float:
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0
