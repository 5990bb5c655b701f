"""What limited a run: a bottleneck named from its host summary, its throughput and its
server counters, with the figures that show it (`Run.bottleneck`).

Pure. The order of the questions matters: a saturated load host comes first, because
then every other figure of the cell measures the client, not the server; then the
server's CPU, its fsyncs, its disks, the network, and last a benchmark where nothing is
busy while the throughput holds flat (waiting: a --rate, locks, a think time). With
sysbench on the database server's machine both share the CPU: the database process's
own CPU says which side used it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Any

from runs.analysis.noise.verdicts import TIMES
from runs.analysis.why.fsyncs import crowded, host_sync, run_fsyncs
from runs.columns import HostFigures, HostSummary, RunCounters

SATURATED_PCT = 85.0  # busy share of all cores at which a host is the limit
IO_UTIL_PCT = 80.0
IOWAIT_PCT = 20.0
IDLE_BUSY_PCT = 50.0
FLAT_CV = 0.10
FSYNC_SHARE = 0.5  # fsync time per transaction over the latency
NETWORK_KBS = 100_000.0  # 0.8 Gbit/s: most of a 1 Gbit/s link
BUSY_START_PCT = 25.0  # another process using the CPU before sysbench started
# sysbench saturated: its own CPU at this share of what its threads can use, min(threads,
# cores) cores; below it, it waited for something else (the server, the network, a CPU
# that other processes held), and the client did not set the pace.
SYSBENCH_SATURATED = 0.9
# "Most of the run": a host's figures are means over the seconds it was sampled. Below
# this share a saturated stretch (or an idle one) may be a part, not the run, and a
# silent load host hides the question that comes first (did the client set the pace?):
# no bottleneck is drawn, the run says its telemetry was incomplete.
MIN_COVERAGE = 0.8
CLIENT = "this figure measures the client"
Host = HostFigures | None  # the server host, when it was sampled
Hosts = Sequence[HostFigures]  # the load hosts


@dataclass(frozen=True)
class RunLoad:
    """A run's own figures the classifier weighs with its host summary."""

    tps: Sequence[float]  # steady-state interval tps
    latency_ms: float | None  # average latency
    fsyncs_per_tx: float | None = None
    fsync_ms: float | None = None  # the average time per fsync, when timed
    fsync_text: str = ""  # the fsyncs by class and the source of each time
    fsync_lower_bound: bool = False  # the time is the host's device time: a lower bound
    same_machine: bool = False
    busy_start_pct: Mapping[str, float] | None = None  # host: busy % just before sysbench
    threads: int | None = None  # sysbench's threads: the cores it can use at most


def bottleneck_classify(summary: Mapping[str, Any], load: RunLoad) -> dict[str, Any]:
    """`Run.bottleneck`: kind, evidence sentences, and the guards."""
    hosts = HostSummary.load(summary)
    server = hosts.first("server")
    loads = hosts.of_role("load")
    partial = [_partial_text(h) for h in hosts.hosts if _partial(h)]
    during = others_during(summary)
    kind, evidence = ("unknown", partial) if partial else _kind(server, loads, load, during)
    if kind == "fsync" and (caveat := crowded(summary)):
        evidence.append(caveat)  # the probe's time is then a floor of the server's
    client_bound = kind == "load_cpu"
    if client_bound:
        evidence.append(f"{CLIENT}: the load host, not the server, set the pace")
    if load.same_machine:
        evidence.append("sysbench ran on the database server's machine: they shared its CPU")
    return {
        "kind": kind,
        "evidence": evidence,
        "client_bound": client_bound,
        "same_machine": load.same_machine,
        "busy_start": busy_start_text(load.busy_start_pct or {}),
    }


def others_during(summary: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    """Other processes' CPU share over the whole run, by (role, host), where it is large
    enough to be a neighbour (`others_pct` of runs/analysis/host_metrics/host_summary.py;
    none in summaries made before it was kept)."""
    found = {}
    entries = [e for e in summary.get("hosts") or [] if isinstance(e, Mapping)]
    servers = {e.get("host") for e in entries if e.get("role") == "server"}
    for entry in entries:
        if entry.get("role") == "load" and entry.get("host") in servers:
            continue  # sysbench on the server's machine: its server entry, without the database
        pct = entry.get("others_pct")
        if isinstance(pct, int | float) and pct >= BUSY_START_PCT:
            found[(str(entry.get("role") or ""), str(entry.get("host") or ""))] = float(pct)
    return found


def _kind(
    server: HostFigures | None,
    loads: Sequence[HostFigures],
    load: RunLoad,
    during: Mapping[tuple[str, str], float],
) -> tuple[str, list[str]]:
    checks = [_other_processes, _server_cpu, _fsync, _io, _network]
    if load.same_machine and server is not None:
        # One machine's CPU is judged once, by who used it: not as a load host's and
        # a server's both.
        before = (load.busy_start_pct or {}).get(server.host, 0.0)
        found = _shared_cpu(server, before, during.get(("server", server.host), 0.0), load)
        if found is not None and not (found[0] == "other_processes" and fsync_bound(server, load)):
            return found
        loads = [h for h in loads if h.host != server.host]
        checks.remove(_server_cpu)
        checks.remove(_other_processes)
    for host in loads:
        if (found := _load_cpu(host, during.get(("load", host.host), 0.0), load)) is not None:
            return found
    for check in checks:
        found = check(server, loads, load)
        if found is not None:
            return found
    if _waiting(server, loads, load):
        return "waiting", [_waiting_text(server, loads, load)]
    if server is None and not loads:
        return "unknown", ["no host metrics were recorded for this run"]
    evidence = ["no machine was saturated and the throughput moved: nothing stands out"]
    if load.fsync_lower_bound and load.fsyncs_per_tx and load.fsyncs_per_tx >= 0.5:
        evidence.append(
            f"fsyncs: {load.fsync_text}; the device's time per flush is a lower bound of an "
            "fsync's time (the sync probe did not run on the server host: its host summary "
            "says why): turn on the server's own timing to tell whether they bound it"
        )
    return "unknown", evidence


def _partial(host: HostFigures) -> bool:
    """Sampled over less than most of the run (runs from before coverage was counted
    have none: they are taken as whole)."""
    return bool(host.run_s) and (host.seconds or 0) < MIN_COVERAGE * (host.run_s or 0)


def _partial_text(host: HostFigures) -> str:
    return (
        f"host metrics cover only {host.seconds} of {host.run_s} s of the {host.role} host "
        f"{host.host}: telemetry was incomplete, no bottleneck drawn from part of the run"
    )


def _load_cpu(host: HostFigures, others: float, load: RunLoad) -> tuple[str, list[str]] | None:
    """A saturated load host measures the client only when sysbench itself saturated it:
    other processes' share over the run (neighbours that came at any time) is theirs.
    Where sysbench's own CPU was read (`sysbench_saturated`), that decides; else the
    host's totals less the neighbours' rise over the run."""
    busy = _busy(host)
    if (own := sysbench_saturated(host, load)) is not None:
        saturated, text = own
        if saturated:
            return "load_cpu", [text]
        if busy < SATURATED_PCT:
            return None
        return "other_processes", [
            f"load host {host.host} was {busy:.0f} % busy, other processes "
            f"{max(0.0, busy - (host.sysbench_pct or 0)):.0f} % of its {host.ncpu} cores: "
            f"{text}: this run measured a shared client"
        ]
    if busy < SATURATED_PCT:
        return None
    if busy - others >= SATURATED_PCT:
        return "load_cpu", [_busy_text("load host", host)]
    return "other_processes", [
        f"load host {host.host} was {busy:.0f} % busy, {others:.0f} % of it other processes' "
        f"over the run: sysbench {busy - others:.0f} % of its {host.ncpu} cores did not "
        "saturate it: this run measured a shared client"
    ]


def sysbench_saturated(host: HostFigures, load: RunLoad) -> tuple[bool, str] | None:
    """Whether sysbench's own CPU (read each second on its load host) reached what its
    threads can use, min(threads, cores) cores, and the sentence that says it; None
    where it was not read (a cell from several load hosts, runs from before)."""
    if host.sysbench_pct is None or not host.ncpu:
        return None
    usable = min(load.threads or host.ncpu, host.ncpu)
    used = host.sysbench_pct * host.ncpu / 100
    saturated = used >= SYSBENCH_SATURATED * usable
    return saturated, (
        f"sysbench's own process used {used:.2f} of the {usable} cores its "
        f"{load.threads or '?'} threads can use ({100 * used / usable:.0f} %)"
        + ("" if saturated else ": it was not saturated")
    )


def _shared_cpu(
    host: HostFigures, before: float, during: float, load: RunLoad
) -> tuple[str, list[str]] | None:
    """One machine for both: who used its CPU, the database process or the rest. Other
    processes' share is not the benchmark's, whether they were busy before sysbench
    started (busy_start) or came later (`during`, over the whole run): a machine
    saturated by them says so, not that the benchmark was CPU-bound; and sysbench is
    blamed only when it and the database saturated the machine, sysbench the larger."""
    busy, ncpu, db = _busy(host), host.ncpu, host.db
    if busy < SATURATED_PCT or not ncpu or db is None:
        return None
    db_pct = 100.0 * ((db.user_cores or 0) + (db.system_cores or 0)) / ncpu
    rest_pct = max(0.0, busy - db_pct)
    # Other processes' share: what they used before sysbench started, if they went on,
    # or what rose above sysbench's quietest second, whichever is larger; where sysbench's
    # own CPU was read, the rest beyond it (no guess).
    others = min(rest_pct, max(before if before >= BUSY_START_PCT else 0.0, during))
    if host.sysbench_pct is not None:
        others = max(0.0, rest_pct - host.sysbench_pct)
    sysbench = rest_pct - others
    if others > max(db_pct, sysbench):
        return "other_processes", [_shares_text(host, busy, db_pct, sysbench, others)]
    if busy - others < SATURATED_PCT:
        return None
    text = (
        f"{host.host} was {busy:.0f} % busy: the database process {db_pct:.0f} %, "
        f"sysbench {sysbench:.0f} %, other processes {others:.0f} %"
    )
    return ("load_cpu" if sysbench > db_pct else "server_cpu"), [text]


def _other_processes(server: Host, loads: Hosts, load: RunLoad) -> tuple[str, list[str]] | None:
    """A server host saturated while the database used little of it: other processes
    took the CPU (sysbench runs elsewhere: the rest is theirs)."""
    if server is None or _busy(server) < SATURATED_PCT or not server.ncpu or server.db is None:
        return None
    if fsync_bound(server, load):  # the fsyncs set the pace, whoever else used the CPU
        return None
    db = server.db
    db_pct = 100.0 * ((db.user_cores or 0) + (db.system_cores or 0)) / server.ncpu
    others = max(0.0, _busy(server) - db_pct)
    if others <= db_pct:
        return None
    return "other_processes", [_shares_text(server, _busy(server), db_pct, 0.0, others)]


def _shares_text(host: HostFigures, busy: float, db: float, sysbench: float, others: float) -> str:
    return (
        f"{host.host} was {busy:.0f} % busy, mostly with other processes: database "
        f"{db:.0f} %, sysbench {sysbench:.0f} %, others {others:.0f} % of its "
        f"{host.ncpu} cores: this run measured a shared machine"
    )


def _server_cpu(server: Host, loads: Hosts, load: RunLoad) -> tuple[str, list[str]] | None:
    if server is None or _busy(server) < SATURATED_PCT:
        return None
    evidence = [_busy_text("server host", server)]
    used = server.cpu_us_per_tx
    if used is not None:
        evidence.append(f"the database process used {used:.0f} µs of CPU per transaction")
    return "server_cpu", evidence


def fsync_parts(server: Host, load: RunLoad) -> tuple[float, float | None] | None:
    """The fsyncs' time per transaction and the database's CPU per transaction (ms; None
    when its process was not sampled), or None when the fsyncs were not timed."""
    if not (load.fsyncs_per_tx and load.fsync_ms and load.latency_ms):
        return None
    used = server.cpu_us_per_tx if server is not None else None
    return load.fsyncs_per_tx * load.fsync_ms, (used / 1000 if used is not None else None)


def fsync_bound(server: Host, load: RunLoad) -> bool:
    """The fsyncs set the pace: they take half the latency or more; or, with the
    database's CPU per transaction known, they are the largest of a transaction's three
    parts (its fsyncs, the database's CPU, and the rest: the client, the network, the
    waits for a CPU). One thread at a time that waits 0.5 ms in fsyncs, 0.3 ms on the
    server's CPU and 0.25 ms elsewhere is paced by its fsyncs at 48 % of the latency;
    and a loaded machine's waits for a CPU land in every part, the fsyncs' included."""
    parts = fsync_parts(server, load)
    if parts is None or load.latency_ms is None:
        return False
    cost, cpu = parts
    if cost >= FSYNC_SHARE * load.latency_ms:
        return True
    return cpu is not None and cost >= cpu and cost >= load.latency_ms - cost - cpu


def _fsync(server: Host, loads: Hosts, load: RunLoad) -> tuple[str, list[str]] | None:
    parts = fsync_parts(server, load)
    if parts is None or load.latency_ms is None or not fsync_bound(server, load):
        return None
    cost, cpu = parts
    at_least = "at least " if load.fsync_lower_bound else ""
    said = load.fsync_text or (
        f"{load.fsyncs_per_tx:.2f} fsync per transaction {TIMES} {load.fsync_ms:.3f} ms"
    )
    text = (
        f"{said} = {at_least}{cost:.3f} ms of the {load.latency_ms:.3f} ms "
        f"latency ({100 * cost / load.latency_ms:.0f} %)"
    )
    if cost < FSYNC_SHARE * load.latency_ms and cpu is not None:
        rest = load.latency_ms - cost - cpu
        text += f": more than the database's CPU ({cpu:.3f} ms) or the rest ({rest:.3f} ms)"
    return "fsync", [text]


def _io(server: Host, loads: Hosts, load: RunLoad) -> tuple[str, list[str]] | None:
    if server is None:
        return None
    util = server.util_pct or 0.0
    iowait = server.iowait_pct or 0.0
    if util < IO_UTIL_PCT and iowait < IOWAIT_PCT:
        return None
    return "io", [
        f"server host {server.host}: its busiest disk {util:.0f} % utilised, iowait "
        f"{iowait:.0f} %, {server.iops or 0:.0f} IOPS, {server.mbs or 0:.1f} MB/s"
    ]


def _network(server: Host, loads: Hosts, load: RunLoad) -> tuple[str, list[str]] | None:
    for host in [*loads, *([server] if server else [])]:
        moved = (host.rx_kbs or 0) + (host.tx_kbs or 0)
        if moved >= NETWORK_KBS:
            return "network", [
                f"{host.role} host {host.host} moved {moved / 1000:.0f} MB/s "
                "(most of a 1 Gbit/s link) while no CPU was saturated"
            ]
    return None


def _waiting(server: Host, loads: Hosts, load: RunLoad) -> bool:
    hosts = [h for h in [server, *loads] if h]
    if not hosts or any(_busy(h) >= IDLE_BUSY_PCT for h in hosts):
        return False
    return _flat(load.tps)


def _waiting_text(server: Host, loads: Hosts, load: RunLoad) -> str:
    busy = ", ".join(f"{h.role} {h.host} {_busy(h):.0f} %" for h in [server, *loads] if h)
    return (
        f"both sides mostly idle ({busy} busy) while tps held flat at {fmean(load.tps):.0f}: "
        "the benchmark waited (a --rate, locks, or round trips)"
    )


def _flat(tps: Sequence[float]) -> bool:
    if len(tps) < 2:
        return False
    mean = fmean(tps)
    return mean > 0 and pstdev(tps) / mean <= FLAT_CV


def _busy(host: HostFigures) -> float:
    return host.busy_pct or 0.0


def _busy_text(what: str, host: HostFigures) -> str:
    return (
        f"{what} {host.host} was {_busy(host):.0f} % busy over {host.ncpu or '?'} "
        f"cores (user {host.user_pct or 0:.0f} %, system {host.system_pct or 0:.0f} %), "
        f"run queue {host.runq or 0:.1f}"
    )


def busy_start_text(busy: Mapping[str, float]) -> str:
    """A sentence when a host was busy before sysbench started; "" when all were quiet."""
    busy_hosts = {h: pct for h, pct in busy.items() if pct >= BUSY_START_PCT}
    if not busy_hosts:
        return ""
    named = ", ".join(f"{h} {pct:.0f} %" for h, pct in busy_hosts.items())
    return f"started on a busy host: another process used the CPU before sysbench ({named} busy)"


@dataclass(frozen=True)
class FsyncFigures:
    per_tx: float | None  # the classes that matter, summed
    ms: float | None  # their average time per fsync, each class timed by its own source
    text: str
    lower_bound: bool


def fsync_figures(
    counters: Mapping[str, Any] | None, summary: Mapping[str, Any] | None = None
) -> FsyncFigures:
    """A run's fsyncs per transaction (redo log and binary log, and data files where
    counted) and their average time, each class timed by its own source
    (runs/analysis/why/fsyncs.py), from `Run.counters` and `Run.host_summary`."""
    by_class = run_fsyncs(RunCounters.load(counters), host_sync(summary))
    material = [by_class.get(n) for n in by_class.material()]
    timed = [c for c in material if c.ms is not None]
    count = sum(c.per_tx or 0 for c in material)
    ms = sum(c.cost_ms or 0 for c in timed) / count if timed and count else None
    return FsyncFigures(
        by_class.per_tx if material else None,
        ms if len(timed) == len(material) else None,
        by_class.text(),
        any(c.lower_bound for c in timed),
    )
