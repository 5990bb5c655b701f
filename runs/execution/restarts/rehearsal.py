"""Preflight of the restart path: what a batch's restarts would do, checked without
changing anything: the target opted in and is on the worker's machine, the binaries of
each install and its data directory are there (a managed instance), the command exists
and the include may be written (a service), the running server is one of the installs,
and each restart-only setting is one the server knows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from runs import targets
from runs.execution.preflight.report import FAILED, OK, WARNING, PreflightReport
from runs.execution.restarts import processes
from runs.execution.restarts.processes import RestartFailed
from runs.execution.restarts.restarter import _install_at, _restart_names
from runs.execution.restarts.spec import restart_names, restart_spec
from runs.models import Target

LOCAL = frozenset({"", "localhost", "127.0.0.1", "::1"})
CHECK = "restart"


def check_restarts(
    report: PreflightReport,
    target: Target | None,
    server_settings: dict[str, list[str]],
    server_axes: dict[str, Any],
    restarted: frozenset[str] = frozenset(),
) -> None:
    """`restarted`: the settings that restart another target of the plan (a targets
    axis): this one, restarted for them too, must have opted in."""
    installs, configs = server_axes.get("installs") or [], server_axes.get("configs") or []
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
    if target.host not in LOCAL:
        report.add(
            target.name,
            CHECK,
            FAILED,
            f"restarts run on the worker's machine only, not {target.host}",
        )
        return
    spec = restart_spec(target.engine, target.restart_mode, target.restart_config)
    assert spec is not None
    problems: list[str] = []
    if spec.mode == "managed":
        for install in spec.installs:
            try:
                processes.server_binary(target.engine, install)
            except RestartFailed as e:
                problems.append(str(e))
            if not Path(install.datadir).is_dir():
                problems.append(f"no data directory {install.datadir}")
            if install.config and not os.access(install.config, os.R_OK):
                problems.append(f"cannot read {install.config}")
    else:
        if not os.access(spec.command[0], os.X_OK):
            problems.append(f"{spec.command[0]} is not an executable program")
        folder = os.path.dirname(spec.include)
        if not os.access(folder, os.W_OK) or (
            os.path.exists(spec.include) and not os.access(spec.include, os.W_OK)
        ):
            problems.append(f"{spec.include} cannot be written")
    try:
        with targets.connect_to(target) as db:
            facts = db.restart_facts(names)
        running = _install_at(spec, facts.datadir).label if spec.mode == "managed" else ""
    except (targets.TargetError, RestartFailed) as e:
        problems.append(getattr(e, "message", str(e)))
        facts, running = None, ""
    if facts is not None:
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
    if problems:
        report.add(target.name, CHECK, FAILED, "; ".join(problems))
        return
    what = (
        "stop it and start the install"
        if spec.mode == "managed"
        else f"write {spec.include} and run {spec.command[0]}"
    )
    report.add(
        target.name,
        CHECK,
        OK,
        f"would restart it ({what}) before each new install, config or restart-only value, "
        f"waiting up to {spec.timeout_s} s, then put back the original"
        + (f" (install {running} runs now)" if running else "")
        + " and restart once more",
    )
