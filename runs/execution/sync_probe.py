"""The server facts the host metrics need before a cell (its pid file, where its log is),
and the sync probe on the server host while it runs: started with the /proc sampler,
summed up over the measured interval into the server host's `sync_probe`.

The probe times fsyncs on the file system of the server's redo log or WAL
(runs/loadhosts/sync_probe.py), so that a class of fsync the server does not time itself
is timed by the machine it runs on, not by the device's lower bound
(runs/analysis/why/fsyncs.py). Its own cost is in its summary (`cost`). A probe that cannot
run (no log directory known, none writable on that file system, no python3 on an SSH
server host) is said in `sync_probe.problem`, and the lower bound stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from runs import targets
from runs.analysis.host_metrics.sync_probe import SyncSite, probe_summary
from runs.loadhosts import ssh
from runs.loadhosts.sync_probe import LocalSyncProbe, SSHSyncProbe, SyncProbe
from runs.models import LoadHost, Target
from runs.targets.sync_probe import sync_site


@dataclass(frozen=True)
class ServerFacts:
    pid_file: str = ""
    pid_problem: str = ""
    site: SyncSite | None = None
    site_problem: str = ""


def server_facts(target: Target) -> ServerFacts:
    """The server's pid file and its log's site, on one connection."""
    try:
        with targets.connect_to(target) as db:
            path = db.pid_file()
            site, site_problem = sync_site(db)
    except targets.TargetError as e:
        why = f"the server's process id is unknown: {e.message}"
        return ServerFacts(pid_problem=why, site_problem=e.message)
    if not path:
        why = "the server does not say where its pid file is: no database process CPU"
        return ServerFacts("", why, site, site_problem)
    return ServerFacts(path, "", site, site_problem)


@dataclass
class ProbeOnHost:
    """The server host's probe, or why there is none."""

    probe: SyncProbe | None = None
    problem: str = ""

    def poll(self) -> None:
        if self.probe is not None:
            self.probe.poll()

    def close(self) -> None:
        if self.probe is not None:
            self.probe.close()

    def summary(self, *, started: float | None, run_s: float | None, warmup_s: float) -> dict:
        """The server host's `sync_probe`; {} when the probe is turned off."""
        if self.probe is None:
            return {"problem": self.problem} if self.problem else {}
        if started is None or not run_s:
            return {"problem": "sysbench did not run: nothing to sum up"}
        summary: dict[str, Any] = probe_summary(
            self.probe.lines,
            offset=self.probe.offset,
            start=started + warmup_s,
            end=started + run_s,
            every_s=settings.BENCHDASH_SYNC_PROBE_S,
        )
        if "problem" in summary and self.probe.problem:
            summary["problem"] = self.probe.problem
        return summary


def probe_open(name: str, host: LoadHost | None, facts: ServerFacts) -> ProbeOnHost:
    """The probe started on the server host (this machine when `host` is None or local)."""
    every_s = settings.BENCHDASH_SYNC_PROBE_S
    if not every_s:
        return ProbeOnHost()
    if facts.site is None:
        return ProbeOnHost(problem=facts.site_problem or "the server's log directory is unknown")
    try:
        if host is None or host.kind == LoadHost.Kind.LOCAL:
            return ProbeOnHost(LocalSyncProbe(name, facts.site, every_s))
        timeout = settings.BENCHDASH_SSH_TIMEOUT
        ssh_host = ssh.SSHHost.from_load_host(host, timeout=timeout)
        return ProbeOnHost(SSHSyncProbe(ssh_host, facts.site, every_s))
    except (ssh.SSHError, OSError) as e:
        return ProbeOnHost(problem=f"the sync probe on {name} did not start: {e}")
