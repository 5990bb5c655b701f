"""Preflight of the restart path: what a batch's restarts would do, and where, checked
without changing anything: the target opted in and its server's machine can be reached
(the worker's own, or its server host over SSH), the binaries of each install, its data
directory and config are there (a managed instance), the command is executable and the
include may be written (a service), the running server is one of the installs, and each
restart-only setting is one the server knows."""

from __future__ import annotations

from typing import Any

from runs import targets
from runs.errors import InvalidInput
from runs.execution.preflight.report import FAILED, OK, WARNING, PreflightReport
from runs.execution.restarts import processes
from runs.execution.restarts.operator import include_problem, target_restart_spec
from runs.execution.restarts.processes import RestartFailed
from runs.execution.restarts.restarter import _restart_names
from runs.execution.restarts.spec import Install, RestartSpec, restart_names
from runs.loadhosts import ServerShell, ShellError
from runs.models import Target

CHECK = "restart"


def check_restarts(
    report: PreflightReport,
    target: Target | None,
    server_settings: dict[str, list[str]],
    servers: dict[str, Any],
    restarted: frozenset[str] = frozenset(),
) -> None:
    """`restarted`: the settings that restart another target of the plan (a targets
    axis): this one, restarted for them too, must have opted in."""
    installs, configs = servers.get("installs") or [], servers.get("configs") or []
    if target is None:
        return
    dynamic = targets.allowed_settings(target.engine)
    names = _restart_names(target, list(server_settings)) or restart_names(
        target.engine, sorted(restarted), dynamic
    )
    if not (names or installs or configs):
        return
    if not target.restart_mode:
        report.add(target.name, CHECK, FAILED, "this target never restarts (restart mode empty)")
        return
    if refused := processes.shell_refused(target):
        report.add(target.name, CHECK, FAILED, refused)
        return
    try:  # the operator's settings of now: a command or folder may have been taken back
        spec = target_restart_spec(target)
    except InvalidInput as e:
        report.add(target.name, CHECK, FAILED, f"the target's restart config: {e}")
        return
    assert spec is not None
    shell = processes.target_shell(target)
    try:
        problems = path_problems(shell, target.engine, spec)
        facts, running = _running(report, target, shell, spec, names, problems)
        unread = _unreadable_log(shell, spec, facts)
    except ShellError as e:
        report.add(target.name, CHECK, FAILED, f"cannot check the restart path: {e}")
        return
    finally:
        shell.close()
    if problems:
        report.add(target.name, CHECK, FAILED, "; ".join(problems))
        return
    if unread:
        report.add(target.name, CHECK, WARNING, unread)
    report.add(target.name, CHECK, OK, _plan(shell, spec, running, facts))


def _unreadable_log(
    shell: ServerShell, spec: RestartSpec, facts: targets.RestartFacts | None
) -> str:
    """A service's error log that the restarts could not read, said; "" when they can."""
    log = spec.log or (facts.error_log if facts else "")
    if spec.mode != "service" or not log or not shell.test(log, "e") or shell.test(log, "r"):
        return ""
    return (
        f"cannot read the server's error log {log} on {shell.where}: a failed start will "
        "say only the restart command's output"
    )


def path_problems(shell: ServerShell, engine: str, spec: RestartSpec) -> list[str]:
    """What is missing on the server's machine for the restarts, read only."""
    if spec.mode == "managed":
        return [p for install in spec.installs for p in _install_problems(shell, engine, install)]
    where = shell.where
    problems = []
    if not shell.test(spec.command[0], "x"):
        problems.append(f"{spec.command[0]} is not an executable program on {where}")
    folder = spec.include.rsplit("/", 1)[0] or "/"
    if outside := include_problem(shell, spec):
        problems.append(outside)
    elif not shell.test(folder, "w") or (
        shell.test(spec.include, "e") and not shell.test(spec.include, "w")
    ):
        problems.append(f"{spec.include} cannot be written on {where}")
    return problems


def _install_problems(shell: ServerShell, engine: str, install: Install) -> list[str]:
    problems = []
    try:
        processes.server_binary(shell, engine, install)
    except RestartFailed as e:
        problems.append(str(e))
    owner = shell.owner(install.datadir)
    if owner is None or not shell.test(install.datadir, "d"):
        problems.append(f"no data directory {install.datadir} on {shell.where}")
    elif shell.uid() not in (0, owner[0]):
        problems.append(
            f"{install.datadir} belongs to uid {owner[0]}, who must start its server: log "
            f"in to {shell.where} as that user or as root"
        )
    if install.config and not shell.test(install.config, "r"):
        problems.append(f"cannot read {install.config} on {shell.where}")
    return problems


def _running(
    report: PreflightReport,
    target: Target,
    shell: ServerShell,
    spec: RestartSpec,
    names: frozenset[str],
    problems: list[str],
) -> tuple[targets.RestartFacts | None, str]:
    """The server's facts and the install it runs now (managed), problems added."""
    try:
        with targets.connect_to(target) as db:
            facts = db.restart_facts(names)
        running = processes.install_at(shell, spec, facts.datadir).label if spec.installs else ""
    except (targets.TargetError, RestartFailed) as e:
        problems.append(getattr(e, "message", str(e)))
        return None, ""
    unknown = sorted(names - set(facts.values))
    if unknown:
        problems.append(f"the server knows no setting {', '.join(unknown)}")
    dynamic = sorted(names & set(facts.values) - facts.restart_only)
    if dynamic:
        report.add(
            target.name,
            CHECK,
            WARNING,
            f"{', '.join(dynamic)} change without a restart here; set by one all the same",
        )
    return facts, running


def _plan(
    shell: ServerShell, spec: RestartSpec, running: str, facts: targets.RestartFacts | None
) -> str:
    """What the restarts would do, and where, in words."""
    if spec.mode == "managed":
        what = "stop it and start the install"
        errors = ""
    else:
        what = f"write {spec.include} and run {spec.command[0]}"
        log = spec.log or (facts.error_log if facts else "")
        errors = (
            f"; a failed start's error read from {log}"
            if log
            else "; the server does not say where its error log is: give restart_config a "
            "log, or a failed start says only the command's output"
        )
    return (
        f"would restart it on {shell.where} ({what}) before each new install, config or "
        f"restart-only value, waiting up to {spec.timeout_s} s, then put back the original"
        + (f" (install {running} runs now)" if running else "")
        + f" and restart once more{errors}"
    )
