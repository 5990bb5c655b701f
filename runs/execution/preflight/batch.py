"""Preflight: what would break a batch, found before anything runs: the checks in their
order (`run_preflight`), the load hosts' own, and a batch's first check.

Every check names the host it ran against and says what to do when it fails. A plan can
be checked on demand (runs/services/plans.py, `plan_preflight`), and every batch starts
with the same checks (`batch_preflight`): a failure fails the batch before any server
setting is changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.conf import settings

from runs import targets
from runs.execution import worker_limits
from runs.execution.environment import load_host_read_facts
from runs.execution.preflight import target as preflight_target
from runs.execution.preflight.report import (
    FAILED,
    OK,
    WARNING,
    PreflightCheck,
    PreflightReport,
    Subject,
)
from runs.execution.restarts import rehearsal
from runs.execution.restarts.spec import restart_names
from runs.execution.server_targets import server_targets
from runs.frozen import FrozenPlan
from runs.loadhosts import Executor, ExecutorError, executor_for, ssh
from runs.models import Batch, LoadHost
from runs.sysbench.options import OPTIONS
from runs.sysbench.statements import prepared_statements
from runs.sysbench.values import size_in_bytes

__all__ = ["PreflightCheck", "PreflightReport", "batch_preflight", "run_preflight"]

# Beyond one descriptor per thread, sysbench holds its own: stdio, the Lua state, the
# libraries, the log; 10 covers them with room to spare.
OPEN_FILES_MARGIN = 10


def batch_preflight(*, batch: Batch, executor: Executor | None = None) -> PreflightReport:
    """The first check of a batch: the same checks, on the batch's frozen parameters."""
    assert batch.load_host is not None, "only imported batches have no load host"
    runs = list(batch.runs.values_list("threads", "options", "test"))
    frozen = FrozenPlan.from_params(batch.params)
    subject = Subject(
        load_host=batch.load_host,
        target=batch.target,
        test=frozen.test,
        has_script=frozen.script is not None,
        max_threads=max(threads for threads, _, _ in runs),
        server_settings=frozen.server_settings,
        fileio_bytes=fileio_bytes(frozen.test, [options for _, options, _ in runs]),
        extra_load_hosts=tuple(
            LoadHost.objects.filter(pk__in=frozen.extra_load_hosts).order_by("name")
        ),
        prepared_statements=most_statements(frozen.test, runs),
        server_targets=tuple(server_targets(batch)),
        servers=frozen.servers,
    )
    return run_preflight(subject, executor, on_worker=True)


def run_preflight(
    subject: Subject, executor: Executor | None = None, *, on_worker: bool = False
) -> PreflightReport:
    """`on_worker`: this process is the benchmarks worker that will run sysbench (a
    batch's preflight); otherwise the local load host's limits are the workers' reports."""
    report = PreflightReport()
    executor = executor or executor_for(subject.load_host, settings.BENCHDASH_SYSBENCH)
    if (
        subject.has_script
        and subject.load_host.kind != LoadHost.Kind.SSH
        and not settings.BENCHDASH_LOCAL_SCRIPTS
    ):
        report.add(subject.load_host.name, "script", FAILED, _SCRIPT_ON_LOCAL)
    _check_from(report, subject, executor, on_worker)
    for host in subject.extra_load_hosts:  # every host of a cell must log in and reach it
        extra = replace(subject, load_host=host, extra_load_hosts=())
        _check_from(report, extra, executor_for(host, settings.BENCHDASH_SYSBENCH), on_worker)
    for target in subject.server_targets:  # a servers axis: each reached from each host
        for host in (subject.load_host, *subject.extra_load_hosts):
            other = replace(subject, load_host=host, target=target, extra_load_hosts=())
            preflight_target.check_target_from_load_host(
                report, other, executor_for(host, settings.BENCHDASH_SYSBENCH)
            )
    for server in (subject.target, *subject.server_targets):
        checked = replace(subject, target=server)
        preflight_target.check_server(report, checked)
        preflight_target.check_fsync_timing(report, checked)
        preflight_target.check_inside(report, checked)
        preflight_target.check_server_host(report, checked)
    for server in (subject.target, *subject.server_targets):  # each target restarts its own
        rehearsal.check_restarts(
            report, server, subject.server_settings, subject.servers, _restarted(subject)
        )
    return report


def _restarted(subject: Subject) -> frozenset[str]:
    """The settings that restart one of the subject's targets (one that opted in): a
    target that never restarts, among them, is refused by name."""
    names = list(subject.server_settings)
    found: set[str] = set()
    for server in (subject.target, *subject.server_targets):
        if server is not None and server.restart_mode:
            found |= restart_names(server.engine, names, targets.allowed_settings(server.engine))
    return frozenset(found)


def _check_from(
    report: PreflightReport, subject: Subject, executor: Executor, on_worker: bool
) -> None:
    """The load host: logged in, sysbench there, enough open files and disk, and the
    target reached from it."""
    facts = _check_load_host(report, subject, executor)
    if facts is not None and facts.get("sysbench_version"):
        if subject.load_host.kind == LoadHost.Kind.LOCAL and not on_worker:
            _check_workers_open_files(report, subject)
        else:
            _check_open_files(report, subject, facts)
        _check_disk(report, subject, facts)
        preflight_target.check_target_from_load_host(report, subject, executor)


_SCRIPT_ON_LOCAL = (
    "custom Lua scripts run on SSH load hosts only here (BENCHDASH_LOCAL_SCRIPTS is off): "
    "choose an SSH load host"
)


def most_statements(test: str, cells: Sequence[tuple[Any, ...]]) -> int:
    """The most prepared statements any cell holds: (threads, options[, its own test])."""
    return max(
        (
            prepared_statements(cell[2] if cell[2:] and cell[2] else test, *cell[:2])
            for cell in cells
        ),
        default=0,
    )


def fileio_bytes(test: str, cell_options: list[dict[str, Any]]) -> int | None:
    if test != "fileio":
        return None
    default = str(OPTIONS["file-total-size"].default)
    return max(size_in_bytes(str(o.get("file-total-size", default))) for o in cell_options)


# --- the load host ---------------------------------------------------------------------------


def _check_load_host(
    report: PreflightReport, subject: Subject, executor: Executor
) -> dict[str, Any] | None:
    """SSH reachable with the pinned key, and sysbench there; returns the host's facts."""
    name = subject.load_host.name
    try:
        facts = load_host_read_facts(load_host=subject.load_host, executor=executor)
    except ExecutorError as e:
        report.add(name, "ssh", FAILED, str(e))
        return None
    if subject.load_host.kind == LoadHost.Kind.SSH:
        host = subject.load_host
        report.add(
            name,
            "ssh",
            OK,
            f"logged in as {host.user}@{host.address}:{host.port}; the host key "
            f"{ssh.fingerprint(host.host_key)} is the confirmed one",
        )
    version = facts.get("sysbench_version")
    if version:
        report.add(name, "sysbench", OK, str(version))
    else:
        report.add(name, "sysbench", FAILED, _no_sysbench(executor))
    return facts


def _no_sysbench(executor: Executor) -> str:
    return (
        f"sysbench is not installed on load host '{executor.host_name}' ({executor.sysbench} "
        "not found on PATH); install it, e.g. apt-get install sysbench"
    )


def _check_open_files(
    report: PreflightReport, subject: Subject, facts: dict[str, Any], *, where: str = ""
) -> None:
    """`where`: whose limit it is, when not the load host's own process (`on <host>`)."""
    name = subject.load_host.name
    on = where or f"on {name}"
    limits = facts.get("ulimit_nofile") or {}
    hard = limits.get("hard")
    needed = subject.max_threads + OPEN_FILES_MARGIN
    wants = f"threads={subject.max_threads} needs at least {needed} open files"
    if hard is None or hard < 0:  # unlimited (or RLIM_INFINITY locally)
        report.add(name, "open_files", OK, f"{wants}; the limit {on} is unlimited")
    elif hard < needed:
        report.add(
            name,
            "open_files",
            FAILED,
            f"{wants}; the hard limit {on} is {hard}; raise it (nofile in "
            "/etc/security/limits.conf, or LimitNOFILE= of the service) or use fewer threads",
        )
    else:
        report.add(
            name,
            "open_files",
            OK,
            f"{wants}; the hard limit {on} is {hard} (the soft limit, "
            f"{limits.get('soft')}, is raised to it for each run)",
        )


def _check_workers_open_files(report: PreflightReport, subject: Subject) -> None:
    """The local load host is the benchmarks worker's process, not this one: its limit is
    the one each worker reported at start (runs/execution/worker_limits.py)."""
    lowest = worker_limits.lowest_open_files()
    if lowest is None:
        report.add(
            subject.load_host.name,
            "open_files",
            WARNING,
            "no benchmarks worker has reported its open-file limit (none is running?); the "
            "batch checks it again on the worker before it runs",
        )
        return
    worker, limits = lowest
    where = f"of the benchmarks worker {worker}"
    _check_open_files(report, subject, {"ulimit_nofile": limits}, where=where)


def _check_disk(report: PreflightReport, subject: Subject, facts: dict[str, Any]) -> None:
    if subject.fileio_bytes is None:
        return
    name = subject.load_host.name
    free = facts.get("work_free_bytes")
    needs = f"fileio needs {_gib(subject.fileio_bytes)} for its files"
    if free is None:
        report.add(name, "disk", WARNING, f"{needs}; the free space on {name} is unknown")
    elif free < subject.fileio_bytes:
        report.add(
            name,
            "disk",
            FAILED,
            f"{needs}; the working directory on {name} has {_gib(free)} free; free some "
            "space or lower file-total-size",
        )
    else:
        report.add(name, "disk", OK, f"{needs}; {_gib(free)} free on {name}")


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f} GiB"
