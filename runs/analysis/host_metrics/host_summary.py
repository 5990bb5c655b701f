"""A run's host metrics summed up: what each machine did over the steady state.

Pure: the rows' values (runs/analysis/host_metrics/procfs.py made them) in, `Run.host_summary` out.
Means are over the intervals after the warmup; per-transaction figures divide by the
run's steady tps. Network totals leave the loopback interface out unless it carried the
benchmark (the target runs on the same machine) or it is the only interface that moved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, median
from typing import Any

from runs.analysis.host_metrics.procfs import busy_pct
from runs.analysis.results import FINISHED_WELL, RunFigures

CPU_PARTS = ("user", "system", "iowait", "steal", "idle")
DB_PARTS = ("user_cores", "system_cores", "vcsw_s", "nvcsw_s")
# Not one physical device: their I/O is counted again on the disks beneath them.
STACKED_DISKS = ("dm-", "md")
GAP_SLACK_S = 1.0
MOST_SECONDS = 0.8  # sysbench's own CPU read in this share of the seconds: its figures hold


@dataclass(frozen=True)
class HostSeries:
    """One machine's rows of a run, in order: (time_s, values)."""

    role: str  # "server" or "load"
    host: str
    rows: Sequence[tuple[float, Mapping[str, Any]]]
    loopback: bool = False  # the benchmark's traffic went over lo
    run_s: float | None = None  # how long sysbench ran: the seconds the rows should cover
    # The seconds a stream still alive at the end may not have written yet (0 for one
    # that stopped early: what it held is lost).
    unwritten_s: float = 0.0


def covered_s(series: HostSeries) -> float:
    """The seconds of the run the rows cover: up to the last one, and the seconds its
    stream may not have written yet when sysbench ended (those are late, not lost)."""
    if not series.rows:
        return 0.0
    return series.rows[-1][0] + series.unwritten_s


def coverage(series: HostSeries) -> float | None:
    """The share of the run the host's rows cover; None when the run's length is unknown."""
    if not series.run_s:
        return None
    return round(min(1.0, covered_s(series) / series.run_s), 3)


def seconds_missing(series: HostSeries) -> bool:
    """Whether the rows stop short of the run's end: more than a second of slack, for the
    clocks, beyond what the stream may not have written yet."""
    return series.run_s is not None and covered_s(series) < series.run_s - GAP_SLACK_S


def host_entry(series: HostSeries, *, warmup_s: float, tps: float | None) -> dict[str, Any]:
    """One host of `Run.host_summary["hosts"]`."""
    steady = [v for t, v in series.rows if t > warmup_s] or [v for _, v in series.rows]
    entry: dict[str, Any] = {"role": series.role, "host": series.host, "intervals": len(steady)}
    # How much of the run the rows cover: a stream that stopped early is said, and
    # runs/analysis/host_metrics/bottleneck.py draws nothing from it.
    entry["seconds"] = round(min(covered_s(series), series.run_s or float("inf")))
    entry["run_s"] = round(series.run_s) if series.run_s else None
    entry["coverage"] = coverage(series)
    entry["cpu"] = {p: _mean(v["cpu"][p] for v in steady if v.get("cpu")) for p in CPU_PARTS}
    entry["busy_pct"] = _mean(busy_pct(v) for v in steady)
    entry["ncpu"] = max((int(v.get("ncpu") or 0) for v in steady), default=0)
    # sysbench's own CPU (read on its load host, local or SSH), where read most seconds
    own = [v["sysbench_cpu_pct"] for v in steady if "sysbench_cpu_pct" in v]
    entry["sysbench_pct"] = _mean(own) if len(own) >= MOST_SECONDS * len(steady) else None
    entry["others_pct"] = others_pct(steady, entry["ncpu"])
    for name in ("runq", "ctxt_s", "intr_s"):
        entry[name] = _mean(v.get(name) for v in steady)
    entry["iops"] = _mean(_disk_sum(v, ("r_iops", "w_iops")) for v in steady)
    entry["mbs"] = _mean(_disk_sum(v, ("r_mbs", "w_mbs")) for v in steady)
    entry["util_pct"] = _mean(_disk_max(v, "util_pct") for v in steady)
    entry.update(_flushes(steady))
    entry["rx_kbs"] = _mean(_net_sum(v, "rx_kbs", series.loopback) for v in steady)
    entry["tx_kbs"] = _mean(_net_sum(v, "tx_kbs", series.loopback) for v in steady)
    entry["ctxt_per_tx"] = _per(entry["ctxt_s"], tps)
    # What the disks read and wrote per transaction, in KB (the relative table's columns).
    for name, part in (("read_kb_per_tx", "r_mbs"), ("write_kb_per_tx", "w_mbs")):
        entry[name] = _per(_mean(_disk_sum(v, (part,)) * 1000 for v in steady), tps)
    if series.role == "server" and any("db" in v for v in steady):
        db = {p: _mean(v["db"][p] for v in steady if "db" in v) for p in DB_PARTS}
        cores = (db["user_cores"] or 0) + (db["system_cores"] or 0)
        db["cpu_us_per_tx"] = _per(cores * 1e6, tps)
        db["csw_per_tx"] = _per((db["vcsw_s"] or 0) + (db["nvcsw_s"] or 0), tps)
        db.update(_own_io([v["db"] for v in steady if "db" in v], tps))
        entry["db"] = db
    return entry


def _own_io(seconds: Sequence[Mapping[str, Any]], tps: float | None) -> dict[str, Any]:
    """What the server's own processes read and wrote per transaction (/proc/<pid>/io), in
    KB: when every second has it (a part would be a smaller figure, not a cleaner one);
    else why not, as the seconds said it (none for runs from before it was read)."""
    if seconds and all("write_kbs" in d for d in seconds):
        return {
            "read_kb_per_tx": _per(_mean(d["read_kbs"] for d in seconds), tps),
            "write_kb_per_tx": _per(_mean(d["write_kbs"] for d in seconds), tps),
        }
    why = next((d["io_why"] for d in seconds if d.get("io_why")), "")
    had = sum("write_kbs" in d for d in seconds)
    if had and not why:
        why = f"/proc/<pid>/io read in {had} of {len(seconds)} seconds"
    return {"io_why": why} if why else {}


def others_pct(steady: Sequence[Mapping[str, Any]], ncpu: int) -> float | None:
    """Other processes' CPU share over the whole steady state, in % of all cores: each
    second's busy share beyond the database process's (sysbench and the rest), above the
    quietest second's, averaged. sysbench at a steady load uses about the same CPU each
    second, so what rises above its quietest second is a neighbour, whenever it came.
    A guess from the host's totals (sysbench's own process is not sampled): a second in
    which the machine went quiet (a server stall: under half the median second's busy
    share) is not taken for the quietest, or every other second would read as a
    neighbour's; and a
    neighbour present every second is not seen here (the busy share before sysbench,
    runs/analysis/host_metrics/bottleneck.py's busy_start, is). None under two seconds.
    Where sysbench's own CPU was read (its load host is the worker's machine), no guess:
    each second's rest beyond sysbench's own, averaged over the seconds it was read in
    (most of them: the last may come after it ended, its process gone)."""
    own = [(r, v["sysbench_cpu_pct"]) for v in steady
           if "sysbench_cpu_pct" in v and (r := _rest_pct(v, ncpu)) is not None]  # fmt: skip
    if len(own) >= 2 and len(own) >= MOST_SECONDS * len(steady):
        return round(fmean(max(0.0, rest - sysbench) for rest, sysbench in own), 1)
    seconds = [(busy_pct(v), _rest_pct(v, ncpu)) for v in steady]
    read = [(busy, rest) for busy, rest in seconds if busy is not None and rest is not None]
    if len(read) < 2:
        return None
    floor = median(busy for busy, _ in read) / 2
    quietest = min(rest for busy, rest in read if busy >= floor)
    return round(max(0.0, fmean(rest for _, rest in read) - quietest), 1)


def _rest_pct(values: Mapping[str, Any], ncpu: int) -> float | None:
    """A second's busy share beyond the database process's (all of it on a host without)."""
    busy = busy_pct(values)
    if busy is None:
        return None
    db = values.get("db")
    if not db or not ncpu:
        return busy
    return max(0.0, busy - 100.0 * (db["user_cores"] + db["system_cores"]) / ncpu)


def host_summary(
    series: Iterable[HostSeries],
    *,
    warmup_s: float,
    tps: float | None,
    missing: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """`Run.host_summary`: every sampled host, and why any other is missing."""
    hosts = [host_entry(s, warmup_s=warmup_s, tps=tps) for s in series if s.rows]
    return {"hosts": hosts, "missing": [dict(m) for m in missing]}


def _mean(values: Iterable[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return round(fmean(present), 3) if present else None


def _per(rate: float | None, tps: float | None) -> float | None:
    if rate is None or not tps:
        return None
    return round(rate / tps, 3)


def _physical(values: Mapping[str, Any]) -> list[Mapping[str, float]]:
    disks = values.get("disks") or {}
    return [d for name, d in disks.items() if not name.startswith(STACKED_DISKS)]


def _disk_sum(values: Mapping[str, Any], names: Sequence[str]) -> float:
    return sum(d.get(n, 0.0) for d in _physical(values) for n in names)


def _disk_max(values: Mapping[str, Any], name: str) -> float:
    return max((d.get(name, 0.0) for d in _physical(values)), default=0.0)


def _flushes(steady: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """The disks' cache flushes a second and the device's ms per flush, weighted by the
    flushes (kernels 5.5 and later; none before)."""
    rows = [(d["flush_s"], d["flush_ms"]) for v in steady for d in _physical(v) if "flush_s" in d]
    count = sum(n for n, _ in rows)
    if not rows:
        return {}
    per_flush = round(sum(n * ms for n, ms in rows) / count, 4) if count else None
    return {"flush_s": round(count / len(steady), 1), "flush_ms": per_flush}


def _net_sum(values: Mapping[str, Any], name: str, loopback: bool) -> float:
    nets = values.get("nets") or {}
    outside = {k: v for k, v in nets.items() if k != "lo"}
    moved = {k: v for k, v in outside.items() if v.get(name)}
    chosen = nets if loopback or not moved else outside
    return sum(v.get(name, 0.0) for v in chosen.values())


# --- a batch's cells ----------------------------------------------------------------------


def cell_host_metrics(runs: Sequence[RunFigures]) -> list[dict[str, Any]]:
    """Per cell (series and threads, in the runs' order), the medians over its repeats
    of what the results page shows: the server's and the load host's CPU %, iowait %,
    IOPS, MB/s, context switches and the server's CPU per transaction, and the cell's
    bottleneck (the most frequent among its repeats), with the guards any repeat raised."""
    cells: dict[tuple[str, int], list[RunFigures]] = {}
    for run in runs:
        if run.host_figures.hosts or run.bottleneck:
            cells.setdefault((run.series_key, run.threads), []).append(run)
    return [_cell(repeats) for repeats in cells.values()]


def _cell(repeats: Sequence[RunFigures]) -> dict[str, Any]:
    first = repeats[0]
    limits = [r.limit for r in repeats]
    kinds = [limit.kind for limit in limits if limit.kind]
    return {
        "series": first.series_key,
        "label": first.label,
        "threads": first.threads,
        "runs": len(repeats),
        "server": _side(repeats, "server"),
        "load": _side(repeats, "load"),
        "bottleneck": max(set(kinds), key=kinds.count) if kinds else "",
        "evidence": next((r.limit.evidence for r in repeats if r.bottleneck), []),
        "client_bound": any(limit.client_bound for limit in limits),
        "same_machine": any(limit.same_machine for limit in limits),
        "busy_start": sum(1 for limit in limits if limit.busy_start),
        "missing": _missing(repeats),
    }


def _missing(repeats: Sequence[RunFigures]) -> list[str]:
    return sorted({m.name for run in repeats for m in run.host_figures.missing})


def _side(repeats: Sequence[RunFigures], role: str) -> dict[str, float | None] | None:
    entries = [h for r in repeats for h in r.host_figures.of_role(role)]
    if not entries:
        return None
    figures = {
        "busy_pct": [h.busy_pct for h in entries],
        "iowait": [h.iowait_pct for h in entries],
        "iops": [h.iops for h in entries],
        "mbs": [h.mbs for h in entries],
        "ctxt_per_tx": [h.ctxt_per_tx for h in entries],
        "cpu_us_per_tx": [h.cpu_us_per_tx for h in entries],
    }
    return {name: _median(values) for name, values in figures.items()}


def _median(values: Iterable[float | None]) -> float | None:
    present = sorted(float(v) for v in values if v is not None)
    if not present:
        return None
    middle = len(present) // 2
    if len(present) % 2:
        return round(present[middle], 3)
    return round((present[middle - 1] + present[middle]) / 2, 3)


# --- a cell's cost per transaction (the relative table, runs/analysis/relative.py) ----------

PER_TX = ("cpu_us", "csw", "read_kb", "write_kb")
# Where a cell's read and write KB come from: the database server's own processes'
# /proc/<pid>/io when every repeat read it, else the server host's disks (neighbours'
# I/O included), never the two mixed within a cell.
SERVER_PROCESS_IO = "server process"
MACHINE_DISKS = "machine's disks"


@dataclass(frozen=True)
class PerTx:
    """Medians over a cell's repeats of its cost per transaction; None where unmeasured."""

    cpu_us: float | None = None  # the database process's CPU
    csw: float | None = None  # its context switches
    read_kb: float | None = None  # the server's processes' own, or its host's disks
    write_kb: float | None = None
    io_source: str | None = None  # SERVER_PROCESS_IO or MACHINE_DISKS; None unmeasured
    io_why: str = ""  # why not the server's own, when a repeat said

    def to_dict(self) -> dict[str, Any]:
        own = {name: getattr(self, name) for name in PER_TX}
        return {**own, "io_source": self.io_source, "io_why": self.io_why}


def cell_per_tx(runs: Sequence[RunFigures]) -> PerTx:
    """A cell's cost per transaction, the medians over its finished repeats."""
    good = [r for r in runs if r.status in FINISHED_WELL]
    own = _all_own_io(good)
    return PerTx(
        cpu_us=_median(_server(r, "cpu_us") for r in good),
        csw=_median(_server(r, "csw") for r in good),
        read_kb=_median(_server(r, "read_kb", own) for r in good),
        write_kb=_median(_server(r, "write_kb", own) for r in good),
        **_io_source(good, own),
    )


def _all_own_io(runs: Sequence[RunFigures]) -> bool:
    """Whether every repeat has its server's own I/O (then the cell uses it)."""
    dbs = [h.db if (h := r.host_figures.first("server")) else None for r in runs]
    return bool(dbs) and all(d is not None and d.write_kb_per_tx is not None for d in dbs)


def io_source_of(cells: Iterable[PerTx]) -> str:
    """Where a table's KB read and written come from: SERVER_PROCESS_IO or MACHINE_DISKS,
    "mixed" when its cells differ, "" when none was measured."""
    found = {c.io_source for c in cells if c.io_source}
    return str(found.pop()) if len(found) == 1 else "mixed" if found else ""


def _io_source(runs: Sequence[RunFigures], own: bool) -> dict[str, Any]:
    if own:
        return {"io_source": SERVER_PROCESS_IO}
    hosts = [h for r in runs if (h := r.host_figures.first("server")) is not None]
    if not any(h.write_kb_per_tx is not None for h in hosts):
        return {}
    why = next((h.db.io_why for h in hosts if h.db and h.db.io_why), "")
    return {"io_source": MACHINE_DISKS, "io_why": why}


class PerQuery(PerTx):
    """The same costs per query: each repeat's per transaction over the queries its
    transactions made (the summary's qps / tps), the medians over the cell's repeats."""


def cell_per_query(runs: Sequence[RunFigures]) -> PerQuery:
    """A cell's cost per query (the published comparisons' per operation)."""
    good = [r for r in runs if r.status in FINISHED_WELL]
    own = _all_own_io(good)
    medians: dict[str, Any] = {n: _median(_per_query(r, n, own) for r in good) for n in PER_TX}
    return PerQuery(**medians, **_io_source(good, own))


def _per_query(run: RunFigures, name: str, own: bool) -> float | None:
    per_tx, queries = _server(run, name, own), queries_per_tx(run)
    return round(per_tx / queries, 3) if per_tx is not None and queries else None


def queries_per_tx(run: RunFigures) -> float | None:
    """The queries a transaction made: sysbench's qps over its tps (None for a test
    without either, as cpu or fileio)."""
    figures = run.figures
    return figures.qps / figures.tps if figures.qps and figures.tps else None


def _server(run: RunFigures, name: str, own_io: bool = False) -> float | None:
    host = run.host_figures.first("server")
    if host is None:
        return None
    db = host.db
    if name in ("read_kb", "write_kb"):
        if own_io and db is not None:
            return db.read_kb_per_tx if name == "read_kb" else db.write_kb_per_tx
        return host.read_kb_per_tx if name == "read_kb" else host.write_kb_per_tx
    if db is None:
        return None
    if name == "cpu_us":
        return db.cpu_us_per_tx
    if db.csw_per_tx is not None:
        return db.csw_per_tx
    # Runs summed up before csw_per_tx was kept: their rates over their throughput.
    tps = run.throughput
    if tps and db.vcsw_s is not None and db.nvcsw_s is not None:
        return round((db.vcsw_s + db.nvcsw_s) / tps, 3)
    return None
