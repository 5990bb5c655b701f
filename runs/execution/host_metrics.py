"""What the machines did during a cell: the server host's and every load host's /proc,
sampled on sysbench's interval clock, stored with the samples, summed up at the end.

One stream per machine (runs/loadhosts/procstream.py) starts before sysbench: its first
second says whether another process was already using the CPU (a busy start, waited out
when the plan's quiet_wait_s allows). When sysbench starts, the clock starts: a row's
time_s counts from there, like Sample.time_s. The sink takes the new rows when it
publishes a batch of lines (live at once, stored with the heartbeat: no round trip of
their own). When sysbench ends, the run gets its `host_summary` and its `bottleneck`
(runs/analysis/host_metrics/host_summary.py, bottleneck.py). A host that cannot be sampled is named
with its reason on the run, never filled in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from runs.analysis.host_metrics.bottleneck import (
    BUSY_START_PCT,
    RunLoad,
    bottleneck_classify,
    fsync_figures,
)
from runs.analysis.host_metrics.host_summary import HostSeries, host_summary, seconds_missing
from runs.analysis.host_metrics.procfs import ProcSnapshot, busy_pct, host_values
from runs.columns import Bottleneck, RunSummary
from runs.execution.outages.outage_buffer import OutageBuffer
from runs.execution.sync_probe import ProbeOnHost, ServerFacts, probe_open, server_facts
from runs.frozen import FrozenPlan
from runs.loadhosts import ssh
from runs.loadhosts.procstream import LocalProcStream, ProcStream, SSHProcStream
from runs.models import Batch, LoadHost, Run, Target
from runs.sysbench.options import is_sql_test

logger = logging.getLogger(__name__)

LOCAL_ADDRESSES = frozenset({"127.0.0.1", "localhost", "::1", ""})
FIRST_SECOND_S = 3.0  # at most this long for a stream's first interval before sysbench
LOCAL = "local"  # the identity of the worker's own machine


@dataclass(frozen=True)
class HostRow:
    """One HostMetrics row on its way to the database and the page."""

    role: str
    host: str
    seq: int
    time_s: float
    values: dict[str, Any]

    def record(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "host": self.host,
            "seq": self.seq,
            "time_s": self.time_s,
            "values": self.values,
        }


@dataclass
class Watched:
    """One machine under watch, in one or both roles (sysbench on the server's machine)."""

    host: str
    roles: tuple[str, ...]
    stream: ProcStream
    loopback: bool
    last: ProcSnapshot | None = None
    last_values: dict[str, Any] | None = None
    rows: list[tuple[float, dict[str, Any]]] = field(default_factory=list)

    def advance(
        self, started: float | None, every: bool = False
    ) -> list[tuple[float, dict[str, Any]]]:
        """The intervals the new snapshots close: (time_s, values). `every`: see
        ProcStream.take."""
        new = []
        for arrived, snapshot in self.stream.take(every):
            if self.last is not None:
                values = host_values(self.last, snapshot, clk_tck=self.stream.clk_tck)
                if values is not None:
                    self.last_values = values
                    if started is not None and arrived > started:
                        new.append((round(arrived - started, 3), values))
            self.last = snapshot
        self.rows += new
        return new


class HostMetricsSampler:
    """The cell's machines under watch, from before sysbench starts until it ends."""

    def __init__(
        self, watched: list[Watched], missing: list[dict[str, Any]], probe: ProbeOnHost
    ) -> None:
        self.watched = watched
        self.missing = missing
        self.probe = probe  # the server host's sync probe (runs/execution/sync_probe.py)
        self.started: float | None = None
        self.run_s: float | None = None  # how long sysbench ran, once stopped
        self.busy_start: dict[str, float] = {}
        self._seq: dict[tuple[str, str], int] = {}
        self._stopped = False

    def first_second(self, *, quiet_wait_s: int, waiting: Callable[[str], bool]) -> None:
        """Each machine's busy CPU over its first interval, before sysbench starts; with
        `quiet_wait_s`, wait up to that long for every machine to be quiet. `waiting` says
        what the batch waits for (and keeps its heartbeat going); True ends the wait (the
        batch must stop: the cell's own watch says why)."""
        deadline = time.monotonic() + quiet_wait_s
        busy = self._measure()
        while busy and max(busy.values()) >= BUSY_START_PCT and time.monotonic() < deadline:
            named = ", ".join(f"{h} {pct:.0f} % busy" for h, pct in busy.items())
            if waiting(f"a quiet host before the next cell ({named})"):
                break
            time.sleep(1.0)
            busy = self._measure()
        if quiet_wait_s:
            waiting("")
        self.busy_start = busy

    def _measure(self) -> dict[str, float]:
        busy = {}
        for watched in self.watched:
            arrived = watched.stream.arrived() + 1
            limit = time.monotonic() + FIRST_SECOND_S
            while watched.stream.arrived() < max(arrived, 2) and time.monotonic() < limit:
                time.sleep(0.05)
            watched.advance(None, every=True)
            pct = busy_pct(watched.last_values or {})
            if pct is not None:
                busy[watched.host] = pct
        return busy

    def start_clock(self, sysbench_pid: int | None = None) -> None:
        """sysbench just started: time_s counts from now; its own CPU is read each second
        from its process on its load host (`sysbench_pid`), where the stream can."""
        self.started = time.monotonic()
        if sysbench_pid is not None:
            for watched in self.watched:
                if "load" in watched.roles:
                    watched.stream.watch_sysbench(sysbench_pid)

    def take(self, every: bool = False) -> list[HostRow]:
        """The rows of the intervals closed since the last call, for every role (in
        twos while sysbench runs: ProcStream.take)."""
        rows = []
        self.probe.poll()  # drained as the streams are: its pipe never fills
        for watched in self.watched:
            for time_s, values in watched.advance(self.started, every):
                rows += [self._row(watched, role, time_s, values) for role in watched.roles]
        return rows

    def _row(self, watched: Watched, role: str, time_s: float, values: dict[str, Any]) -> HostRow:
        key = (role, watched.host)
        self._seq[key] = seq = self._seq.get(key, 0) + 1
        if role == "load":
            values = {k: v for k, v in values.items() if k != "db"}
        return HostRow(role, watched.host, seq, time_s, values)

    def stop(self) -> list[HostRow]:
        """The streams closed; the rows not taken yet. Once: later calls return []."""
        if self._stopped:
            return []
        self._stopped = True
        if self.started is not None:
            self.run_s = time.monotonic() - self.started
        rows = self.take(every=True)
        self.probe.close()
        for watched in self.watched:
            watched.stream.close()
            self.missing += _missing_of(watched, self._series_of(watched))
        return rows

    def series(self) -> list[HostSeries]:
        return [s for w in self.watched for s in self._series_of(w)]

    def _series_of(self, watched: Watched) -> list[HostSeries]:
        stream = watched.stream
        unwritten_s = 0.0 if stream.stopped else stream.unwritten_s
        return [
            HostSeries(role, watched.host, watched.rows, watched.loopback, self.run_s, unwritten_s)
            for role in watched.roles
        ]


def _missing_of(watched: Watched, series: list[HostSeries]) -> list[dict[str, Any]]:
    """A machine that gave no interval at all, one whose intervals stop short of the
    run's end (with the seconds they cover), or a server without its process's figures."""
    problem = watched.stream.problem
    if not watched.rows:
        why = problem or "no /proc reading came while sysbench ran"
        return [{"role": role, "host": watched.host, "why": why} for role in watched.roles]
    short = [s for s in series if seconds_missing(s)]
    if short:
        why = watched.stream.stopped or problem or "no /proc reading came for the rest of the run"
        return [_short(s, why) for s in short]
    if problem and "server" in watched.roles:
        return [{"role": "server", "host": watched.host, "why": problem}]
    return []


def _short(series: HostSeries, why: str) -> dict[str, Any]:
    seconds = series.rows[-1][0] + series.unwritten_s
    return {
        "role": series.role,
        "host": series.host,
        "why": why,
        "seconds": round(seconds),
        "of": round(series.run_s or 0),
    }


# --- which machines --------------------------------------------------------------------


def host_metrics_start(
    *,
    batch: Batch,
    load_hosts: list[LoadHost],
    store: OutageBuffer,
    beat: Callable[[], bool],
    target: Target | None = None,
) -> HostMetricsSampler | None:
    """The cell's machines under watch, and their first second, before sysbench starts
    (waiting for quiet hosts as the plan allows, shown as the batch's `waiting_for`);
    None when host metrics are turned off (BENCHDASH_HOST_METRICS). `beat` is the batch's
    heartbeat, True when the batch must stop."""
    if not settings.BENCHDASH_HOST_METRICS:
        return None
    machines = _machines(batch, load_hosts, target or batch.target)

    def waiting(what: str) -> bool:
        batch.waiting_for = what
        store.attempt(lambda: Batch.objects.filter(pk=batch.pk).update(waiting_for=what))
        # A worker waiting is alive: without its heartbeat the sweeper would take the
        # batch for one whose worker died, and requeue it while it runs.
        return beat()

    quiet_wait_s = FrozenPlan.from_params(batch.params).quiet_wait_s
    machines.first_second(quiet_wait_s=quiet_wait_s, waiting=waiting)
    return machines


def _machines(
    batch: Batch, load_hosts: list[LoadHost], target: Target | None
) -> HostMetricsSampler:
    """Streams for the cell's machines (its target's server): one per machine, whatever
    its roles."""
    missing: list[dict[str, Any]] = []
    server = _server_side(batch, target, missing)  # (identity, name, LoadHost | None, facts)
    wanted: dict[str, tuple[str, list[str], LoadHost | None, str]] = {}
    probe = ProbeOnHost()
    if server is not None:
        identity, name, host, facts = server
        wanted[identity] = (name, ["server"], host, facts.pid_file)
        probe = probe_open(name, host, facts)
    for load_host in load_hosts:
        identity = _identity(load_host)
        if identity in wanted:
            wanted[identity][1].append("load")
        else:
            wanted[identity] = (load_host.name, ["load"], load_host, "")
    loopback = target is not None and _is_local(target)
    watched = []
    for name, roles, host, pid_file in wanted.values():
        stream = _open(name, host, pid_file, roles, missing)
        if stream is not None:
            watched.append(Watched(name, tuple(roles), stream, loopback))
    return HostMetricsSampler(watched, missing, probe)


def _server_side(
    batch: Batch, target: Target | None, missing: list[dict[str, Any]]
) -> tuple[str, str, Any, ServerFacts] | None:
    if target is None or not is_sql_test(FrozenPlan.from_params(batch.params).test):
        return None
    facts = server_facts(target)
    if facts.pid_problem:
        missing.append({"role": "server", "host": target.name, "why": facts.pid_problem})
    if target.server_host is not None:
        return _identity(target.server_host), target.server_host.name, target.server_host, facts
    if _is_local(target):
        return LOCAL, LOCAL, None, facts
    missing.append(
        {
            "role": "server",
            "host": target.name,
            "why": f"target {target.name} runs on {target.host}, not on this machine, and has "
            "no server host: set one (an SSH host) to record its CPU, disks and network",
        }
    )
    return None


def _is_local(target: Target) -> bool:
    return bool(target.socket) or target.host in LOCAL_ADDRESSES


def _identity(host: LoadHost) -> str:
    if host.kind == LoadHost.Kind.LOCAL:
        return LOCAL
    return f"ssh:{host.pk}"


def _open(
    name: str, host: LoadHost | None, pid_file: str, roles: list[str], missing: list[dict[str, Any]]
) -> ProcStream | None:
    try:
        if host is None or host.kind == LoadHost.Kind.LOCAL:
            return LocalProcStream(name, pid_file)
        timeout = settings.BENCHDASH_SSH_TIMEOUT
        ssh_host = ssh.SSHHost.from_load_host(host, timeout=timeout)
        return SSHProcStream(ssh_host, pid_file, load="load" in roles)
    except (ssh.SSHError, OSError) as e:
        missing += [{"role": role, "host": name, "why": f"not sampled: {e}"} for role in roles]
        return None


def host_metrics_clock(sampler: HostMetricsSampler | None, sysbench_pid: int | None = None) -> None:
    """sysbench just started (as `sysbench_pid` on the cell's one load host, this
    machine or an SSH host): the machines' clock starts."""
    if sampler is not None:
        sampler.start_clock(sysbench_pid)


def host_metrics_stop(sampler: HostMetricsSampler | None) -> list[HostRow]:
    """The streams closed (once, on every path); the rows not taken yet."""
    return sampler.stop() if sampler is not None else []


# --- the end -----------------------------------------------------------------------------


def host_metrics_summary(sampler: HostMetricsSampler | None, *, run: Run, warmup_s: float) -> None:
    """The run's host summary and bottleneck, and a warning per missing host."""
    if sampler is None:
        return
    steady = list(run.samples.filter(in_warmup=False).values_list("tps", flat=True))
    tps = [float(t) for t in steady if t is not None]
    mean_tps = sum(tps) / len(tps) if tps else None
    summary = host_summary(
        sampler.series(), warmup_s=warmup_s, tps=mean_tps, missing=sampler.missing
    )
    probe = sampler.probe.summary(started=sampler.started, run_s=sampler.run_s, warmup_s=warmup_s)
    for entry in summary["hosts"]:
        if entry["role"] == "server" and probe:
            entry["sync_probe"] = probe  # the server host's time per fsync (sync_probe.py)
    run.host_summary = summary
    fsyncs = fsync_figures(run.counters, run.host_summary)
    missing = sampler.missing
    load = RunLoad(
        tps=tps,
        latency_ms=_latency_ms(run),
        fsyncs_per_tx=fsyncs.per_tx,
        fsync_ms=fsyncs.ms,
        fsync_text=fsyncs.text,
        fsync_lower_bound=fsyncs.lower_bound,
        same_machine=any(len(w.roles) == 2 for w in sampler.watched),
        busy_start_pct=sampler.busy_start,
        threads=run.threads,
    )
    run.bottleneck = bottleneck_classify(run.host_summary, load)
    busy_start = Bottleneck.load(run.bottleneck).busy_start
    run.warnings = [
        *run.warnings,
        *(_missing_text(m) for m in missing),
        *([busy_start] if busy_start else []),
    ]


def _missing_text(missing: dict[str, Any]) -> str:
    where = f"the {missing['role']} host {missing['host']}"
    if "seconds" in missing:
        covered = f"{missing['seconds']} of {missing['of']} s"
        return f"host metrics of {where} cover {covered}: {missing['why']}"
    return f"no host metrics for {where}: {missing['why']}"


def _latency_ms(run: Run) -> float | None:
    latency = RunSummary.load(run.summary).latency_avg_ms
    return latency if latency else None
