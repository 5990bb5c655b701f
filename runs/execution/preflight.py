"""Preflight: what would break a batch, found before anything runs.

Every step names the host it ran against and says what to do when it fails. A plan can
be checked on demand (`plan_preflight`), and every batch starts with the same checks
(`batch_preflight`): a failure fails the batch before any server setting is changed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from django.conf import settings

from runs import targets
from runs.errors import InvalidInput
from runs.execution import checks
from runs.frozen import FrozenPlan
from runs.loadhosts import Executor, ExecutorError, executor_for, ssh
from runs.loadhosts.facts import loadhost_refresh_facts, server_host_facts
from runs.models import Batch, LoadHost, Plan, Target
from runs.sysbench.command import build_command
from runs.sysbench.options import OPTIONS, is_sql_test, size_in_bytes
from runs.sysbench.parser import OutputParser

OK, WARNING, FAILED = "ok", "warning", "failed"

# Beyond one descriptor per thread, sysbench holds its own: stdio, the Lua state, the
# libraries, the log; 10 covers them with room to spare.
OPEN_FILES_MARGIN = 10

# Proves that sysbench on the load host can log in to the target with the plan's
# credentials: the same program, driver, config file and network path as the runs, and
# no tables needed (they are prepared later). A mysql or psql client would prove less.
TARGET_CHECK_NAME = "preflight.lua"
TARGET_CHECK_LUA = """\
-- benchdash preflight: log in to the target and run one trivial query
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

function event()
  con:query("SELECT 1")
end

function thread_done()
  con:disconnect()
end
"""
TARGET_CHECK_OPTIONS = {"threads": 1, "time": 0, "events": 1}


@dataclass(frozen=True)
class PreflightStep:
    host: str
    step: str
    status: str  # ok, warning or failed
    message: str


@dataclass
class PreflightReport:
    steps: list[PreflightStep] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(step.status != FAILED for step in self.steps)

    @property
    def failures(self) -> list[str]:
        return [f"{s.step} on {s.host}: {s.message}" for s in self.steps if s.status == FAILED]

    def add(self, host: str, step: str, status: str, message: str) -> None:
        self.steps.append(PreflightStep(host=host, step=step, status=status, message=message))

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "steps": [asdict(step) for step in self.steps]}


@dataclass(frozen=True)
class Subject:
    """What a plan or a batch would run, as far as preflight is concerned."""

    load_host: LoadHost
    target: Target | None
    test: str
    has_script: bool
    max_threads: int
    server_settings: dict[str, list[str]]
    fileio_bytes: int | None  # the largest file-total-size, for fileio
    extra_load_hosts: tuple[LoadHost, ...] = ()  # each cell from these too


def plan_preflight(
    *, plan: Plan, extra_load_hosts: Sequence[LoadHost] | None = None
) -> PreflightReport:
    """Check a plan against its load hosts and target, without running it. A stored value
    no connection can use is refused (InvalidInput) rather than reported as a step.
    `extra_load_hosts` are those of a plan being edited, else those stored."""
    if extra_load_hosts is None:
        extra_load_hosts = list(plan.extra_load_hosts.all()) if plan.pk else []
    checks.plan_connections_check(plan=plan)
    try:
        check = checks.plan_check(
            plan=plan, contact_server=False, extra_load_hosts=extra_load_hosts
        )
    except InvalidInput as e:
        report = PreflightReport()
        report.add(plan.name, "plan", FAILED, str(e))
        return report
    subject = Subject(
        load_host=plan.load_host,
        target=plan.target,
        test=plan.test,
        has_script=plan.script_id is not None,
        max_threads=max(cell.threads for cell in check.cells),
        server_settings=check.settings,
        fileio_bytes=_fileio_bytes(plan.test, [cell.options for cell in check.cells]),
        extra_load_hosts=tuple(extra_load_hosts),
    )
    return run_preflight(subject)


def batch_preflight(*, batch: Batch, executor: Executor | None = None) -> PreflightReport:
    """The first step of a batch: the same checks, on the batch's frozen parameters."""
    assert batch.load_host is not None, "only imported batches have no load host"
    runs = list(batch.runs.values_list("threads", "options"))
    frozen = FrozenPlan.from_params(batch.params)
    subject = Subject(
        load_host=batch.load_host,
        target=batch.target,
        test=frozen.test,
        has_script=frozen.script is not None,
        max_threads=max(threads for threads, _ in runs),
        server_settings=frozen.server_settings,
        fileio_bytes=_fileio_bytes(frozen.test, [options for _, options in runs]),
        extra_load_hosts=tuple(
            LoadHost.objects.filter(pk__in=frozen.extra_load_hosts).order_by("name")
        ),
    )
    return run_preflight(subject, executor)


def run_preflight(subject: Subject, executor: Executor | None = None) -> PreflightReport:
    report = PreflightReport()
    executor = executor or executor_for(subject.load_host, settings.BENCHDASH_SYSBENCH)
    if subject.has_script and subject.load_host.kind != LoadHost.Kind.SSH:
        report.add(subject.load_host.name, "script", FAILED, _SCRIPT_ON_LOCAL)
    _check_from(report, subject, executor)
    for host in subject.extra_load_hosts:  # every host of a cell must log in and reach it
        extra = replace(subject, load_host=host, extra_load_hosts=())
        _check_from(report, extra, executor_for(host, settings.BENCHDASH_SYSBENCH))
    _check_server(report, subject)
    _check_fsync_timing(report, subject)
    _check_server_host(report, subject)
    return report


def _check_from(report: PreflightReport, subject: Subject, executor: Executor) -> None:
    """The load host: logged in, sysbench there, enough open files and disk, and the
    target reached from it."""
    facts = _check_load_host(report, subject, executor)
    if facts is not None and facts.get("sysbench_version"):
        _check_open_files(report, subject, facts)
        _check_disk(report, subject, facts)
        _check_target_from_load_host(report, subject, executor)


_SCRIPT_ON_LOCAL = (
    "custom Lua scripts run on SSH load hosts only: the local host shares the worker's "
    "secrets; choose an SSH load host"
)


def _fileio_bytes(test: str, cell_options: list[dict[str, Any]]) -> int | None:
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
        facts = loadhost_refresh_facts(load_host=subject.load_host, executor=executor)
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


def _check_open_files(report: PreflightReport, subject: Subject, facts: dict[str, Any]) -> None:
    name = subject.load_host.name
    limits = facts.get("ulimit_nofile") or {}
    hard = limits.get("hard")
    needed = subject.max_threads + OPEN_FILES_MARGIN
    wants = f"threads={subject.max_threads} needs at least {needed} open files"
    if hard is None or hard < 0:  # unlimited (or RLIM_INFINITY locally)
        report.add(name, "open_files", OK, f"{wants}; the limit on {name} is unlimited")
    elif hard < needed:
        report.add(
            name,
            "open_files",
            FAILED,
            f"{wants}; the hard limit on {name} is {hard}; raise it (nofile in "
            "/etc/security/limits.conf, or LimitNOFILE= of the service) or use fewer threads",
        )
    else:
        report.add(
            name,
            "open_files",
            OK,
            f"{wants}; the hard limit on {name} is {hard} (the soft limit, "
            f"{limits.get('soft')}, is raised to it for each run)",
        )


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


# --- the target ------------------------------------------------------------------------------


def _check_target_from_load_host(
    report: PreflightReport, subject: Subject, executor: Executor
) -> None:
    """Over SSH: sysbench on the load host logs in to the target. (The local load host is
    the worker's own machine: _check_server's login is the same check.)"""
    target = subject.target
    if target is None or not is_sql_test(subject.test):
        return
    if subject.load_host.kind != LoadHost.Kind.SSH:
        return
    name = subject.load_host.name
    error = _sysbench_login(subject, target, executor)
    where = f"{target.name} ({target.address})"
    if error is None:
        report.add(name, "target", OK, f"sysbench on {name} logs in to {where}")
    else:
        message = f"sysbench on {name} cannot log in to {where} as {target.user}: {error}"
        report.add(name, "target", FAILED, message)


def _sysbench_login(subject: Subject, target: Target, executor: Executor) -> str | None:
    """Run the login check on the load host; None when it passed, else sysbench's words."""
    connection = targets.connection_of(target)

    def make(config_path: str) -> Any:
        return build_command(
            test=subject.test,
            phase="run",
            options=TARGET_CHECK_OPTIONS,
            connection=connection,
            config_path=config_path,
            executable=executor.sysbench,
            script_path=os.path.join(os.path.dirname(config_path), TARGET_CHECK_NAME),
        )

    try:
        process = executor.start(make, files={TARGET_CHECK_NAME: TARGET_CHECK_LUA})
    except (ExecutorError, InvalidInput) as e:
        return str(e)
    parser = OutputParser()
    for line in process.lines(0.5):
        if line is not None:
            parser.feed(line)
    result = parser.finish(process.wait())
    if result.exit_code == 0 and not result.errors:
        return None
    error = result.primary_error
    if error is None:
        return f"sysbench exited with code {result.exit_code}"
    return f"{error.message} ({error.hint})" if error.hint else error.message


def _check_server(report: PreflightReport, subject: Subject) -> None:
    """From the worker: log in (that is the load host's view too when it is local), then
    max_connections against the threads, and binary logging for a sync_binlog axis."""
    target = subject.target
    if target is None or not is_sql_test(subject.test):
        return
    local = subject.load_host.kind == LoadHost.Kind.LOCAL
    try:
        server = checks.target_inspect(target=target)
    except targets.TargetError as e:
        text = f"{e.message} ({e.hint})" if e.hint else e.message
        if local:
            report.add(subject.load_host.name, "target", FAILED, text)
        else:
            message = f"the worker cannot log in to check and change its settings: {text}"
            report.add(target.name, "worker_login", FAILED, message)
        return
    if local:
        report.add(subject.load_host.name, "target", OK, f"logs in to {target.name}")
    _check_limits(report, subject, target, server)


def _check_limits(
    report: PreflightReport, subject: Subject, target: Target, server: targets.ServerInfo
) -> None:
    try:
        warnings = checks.server_warnings(server, subject.server_settings, subject.max_threads)
    except InvalidInput as e:
        step = "max_connections" if e.field == "threads" else e.field
        report.add(target.name, step, FAILED, e.message)
        return
    report.add(
        target.name,
        "max_connections",
        OK,
        f"max_connections={checks.connections_allowed(server, subject.server_settings)} "
        f"holds threads={subject.max_threads}",
    )
    for warning in warnings:
        step = "binlog" if "sync_binlog" in warning else "server"
        report.add(target.name, step, WARNING, warning)


def _check_fsync_timing(report: PreflightReport, subject: Subject) -> None:
    """When a plan compares server settings, the why panel weighs their fsyncs with the
    server's own fsync latency: say when it cannot be read, why, and what fixes it. A
    warning: the batch runs, the panel then says what latency would explain the gap."""
    target = subject.target
    if target is None or not is_sql_test(subject.test):
        return
    if not any(len(values) > 1 for values in subject.server_settings.values()):
        return  # one series: no pair for the why panel to explain
    try:
        with targets.connect_to(target) as db:
            timing = db.fsync_timing()
    except targets.TargetError:
        return  # _check_server has said why the worker cannot log in
    if timing.readable:
        report.add(target.name, "fsync_timing", OK, _FSYNC_TIMED[target.engine == "postgresql"])
        return
    fix = f"; to read it: {timing.fix}" if timing.fix else ""
    message = f"the why panel cannot time fsyncs: {timing.reason}{fix}"
    report.add(target.name, "fsync_timing", WARNING, message)


_FSYNC_TIMED = (
    "the server times its fsyncs (performance_schema is on and readable)",
    "the server times its WAL syncs (track_wal_io_timing is on)",
)


def _check_server_host(report: PreflightReport, subject: Subject) -> None:
    """The database server's own SSH host only adds facts: trouble there is a warning."""
    target = subject.target
    if target is None or target.server_host is None:
        return
    facts, problem = server_host_facts(target=target)
    name = target.server_host.name
    if facts is None:
        report.add(name, "server_host", WARNING, problem)
        return
    disks = len(facts.get("disks") or [])  # type: ignore[arg-type]
    report.add(name, "server_host", OK, f"{facts.get('cpu_cores')} cores, {disks} disks")
