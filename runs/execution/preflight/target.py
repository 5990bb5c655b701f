"""Preflight of the target: sysbench on an SSH load host logs in to it; the worker logs
in, and the server holds the plan (max_connections, prepared statements, binary logging for
a sync_binlog axis, its fsync timing for the why panel); the server's own SSH host answers.
"""

from __future__ import annotations

import os
from typing import Any

from runs import targets
from runs.errors import InvalidInput
from runs.execution.environment import server_host_facts
from runs.execution.preflight import limits
from runs.execution.preflight.report import FAILED, OK, WARNING, PreflightReport, Subject
from runs.loadhosts import Executor, ExecutorError
from runs.models import LoadHost, Target
from runs.sysbench.command import build_command
from runs.sysbench.errors import exit_text
from runs.sysbench.options import is_sql_test
from runs.sysbench.parser import OutputParser

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


def check_target_from_load_host(
    report: PreflightReport, subject: Subject, executor: Executor
) -> None:
    """Over SSH: sysbench on the load host logs in to the target. (The local load host is
    the worker's own machine: check_server's login is the same check.)"""
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
        return f"sysbench {exit_text(result.exit_code)}"
    return f"{error.message} ({error.hint})" if error.hint else error.message


def check_server(report: PreflightReport, subject: Subject) -> None:
    """From the worker: log in (that is the load host's view too when it is local), then
    max_connections against the threads, and binary logging for a sync_binlog axis."""
    target = subject.target
    if target is None or not is_sql_test(subject.test):
        return
    local = subject.load_host.kind == LoadHost.Kind.LOCAL
    try:
        server = limits.target_inspect(target=target)
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
    _check_prepared_statements(report, subject, target, server)
    _check_privileges(report, subject, target)


def _check_privileges(report: PreflightReport, subject: Subject, target: Target) -> None:
    """A PostgreSQL account that is not a superuser: each privilege changing the plan's
    settings needs, checked one by one, every missing one listed with its GRANT (instead of
    launches failing on one missing privilege after another)."""
    if not subject.server_settings or target.engine != "postgresql":
        return
    try:
        with targets.connect_to(target) as db:
            missing = db.missing_privileges(subject.server_settings)
    except targets.TargetError as e:
        report.add(target.name, "privileges", WARNING, f"could not be checked: {e.message}")
        return
    names = ", ".join(sorted(subject.server_settings))
    if not missing:
        report.add(target.name, "privileges", OK, f"the account may change {names}")
        return
    for privilege in missing:
        report.add(target.name, "privilege", FAILED, f"{target.user} may not {privilege.text}")


def _check_limits(
    report: PreflightReport, subject: Subject, target: Target, server: targets.ServerInfo
) -> None:
    try:
        warnings = limits.server_warnings(server, subject.server_settings, subject.max_threads)
    except InvalidInput as e:
        check = "max_connections" if e.field == "threads" else e.field
        report.add(target.name, check, FAILED, e.message)
        return
    report.add(
        target.name,
        "max_connections",
        OK,
        f"max_connections={limits.connections_allowed(server, subject.server_settings)} "
        f"holds threads={subject.max_threads}",
    )
    for warning in warnings:
        check = "binlog" if "sync_binlog" in warning else "server"
        report.add(target.name, check, WARNING, warning)


def check_fsync_timing(report: PreflightReport, subject: Subject) -> None:
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
        return  # check_server has said why the worker cannot log in
    if timing.readable:
        report.add(target.name, "fsync_timing", OK, _FSYNC_TIMED[target.engine == "postgresql"])
        return
    fix = f"; to read it: {timing.fix}" if timing.fix else ""
    message = f"the why panel cannot time fsyncs: {timing.reason}{fix}"
    report.add(target.name, "fsync_timing", WARNING, message)


def check_inside(report: PreflightReport, subject: Subject) -> None:
    """Whether the runs will carry the server's wait events and statement digests (the
    run page and the why panel): when not, why, and the statements that enable them."""
    target = subject.target
    if target is None or not is_sql_test(subject.test):
        return
    try:
        with targets.connect_to(target) as db:
            readable = db.inside_readable()
    except targets.TargetError:
        return  # check_server has said why the worker cannot log in
    if readable.readable:
        report.add(target.name, "inside", OK, "the server's wait events and digests are read")
        return
    fix = f"; to enable them: {readable.fix}" if readable.fix else ""
    report.add(target.name, "inside", WARNING, f"{readable.reason}{fix}")


_FSYNC_TIMED = (
    "the server times its fsyncs (performance_schema is on and readable)",
    "the server times its WAL syncs (track_wal_io_timing is on)",
)


def check_server_host(report: PreflightReport, subject: Subject) -> None:
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


def _check_prepared_statements(
    report: PreflightReport, subject: Subject, target: Target, server: targets.ServerInfo
) -> None:
    found = limits.prepared_statements_check(
        server,
        subject.server_settings,
        test=subject.test,
        max_threads=subject.max_threads,
        statements=subject.prepared_statements,
    )
    if found is not None:
        report.add(target.name, "prepared_statements", *found)
