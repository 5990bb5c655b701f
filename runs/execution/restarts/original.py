"""The server as benchdash found it, before a batch changed anything: what ran (a managed
instance's install and its own command line, a service's include), every setting it
showed; and, after the put-back, which settings did not come back so."""

from __future__ import annotations

from typing import Any

from runs import targets
from runs.execution.restarts import processes
from runs.execution.restarts.operator import include_read
from runs.execution.restarts.processes import RestartFailed
from runs.execution.restarts.readback import came_back_unlike
from runs.execution.restarts.spec import Install, RestartSpec
from runs.loadhosts import ServerShell
from runs.models import Target


def server_found(shell: ServerShell, spec: RestartSpec, target: Target) -> dict[str, Any]:
    """The state `Batch.put_back[target]` keeps before the first change."""
    with targets.connect_to(target) as db:
        facts = db.restart_facts([])
        # every setting as found: read back after the put-back, one by one
        original: dict[str, Any] = {"variables": db.server_info().variables}
        pid_file = db.pid_file() if spec.mode == "managed" else ""
    basedir = binary = ""
    if spec.mode == "managed":
        install = processes.install_at(shell, spec, facts.datadir)
        original["install"] = install.label
        basedir, binary = install.basedir, _binary(shell, target.engine, install)
        found = processes.started_as(shell, processes.pid_in(shell, pid_file))
        original.update(argv=list(found.argv), cwd=found.cwd, argv_not_kept=found.why_not)
    else:
        original["include"] = include_read(shell, spec)
    # A service's own error log, asked while it runs: a start that fails says why there.
    error_log = (spec.log or facts.error_log) if spec.mode == "service" else ""
    return {"mode": spec.mode, "original": original, "running": None,
            "version": facts.version, "basedir": basedir, "binary": binary, "pid": None,
            "error_log": error_log, "machine": shell.where}  # fmt: skip


def _binary(shell: ServerShell, engine: str, install: Install) -> str:
    try:
        return processes.server_binary(shell, engine, install)
    except RestartFailed:
        return ""


def unlike_found(target: Target, original: dict[str, Any]) -> list[str]:
    """Each setting the server shows after the put-back unlike it was found."""
    if not original.get("variables"):
        return []  # kept before the settings were
    with targets.connect_to(target) as db:
        return came_back_unlike(original["variables"], db.server_info().variables)
