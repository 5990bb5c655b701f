"""The target's server against what a batch will ask of it: enough connections for its
threads (max_connections, and the reserved ones), the privilege to change its settings
(ALTER SYSTEM), room for its prepared statements, and binary logging for a sync_binlog
axis. Asked when a plan is checked (runs/services/plans.py), by preflight (target.py), and
by the worker before it changes a setting (runs/execution/environment.py).
"""

from __future__ import annotations

from runs import targets
from runs.errors import InvalidInput
from runs.models import Target


def target_inspect(*, target: Target) -> targets.ServerInfo:
    with targets.connect_to(target) as db:
        return db.server_info()


def server_warnings(
    server: targets.ServerInfo, server_settings: dict[str, list[str]], max_threads: int
) -> list[str]:
    """Warnings for the user, and a refusal when threads exceed max_connections."""
    allowed = connections_allowed(server, server_settings)
    # benchdash holds one connection of its own while sysbench runs.
    if max_threads + 1 > allowed:
        where = (
            " in the cells that set it so"
            if server_settings.get("max_connections")
            else " on the server"
        )
        raise InvalidInput(
            "threads",
            f"threads={max_threads} needs {max_threads + 1} connections (one per sysbench "
            f"thread, one for benchdash) but max_connections is {allowed}{where}; raise "
            f"max_connections or use fewer threads{_max_connections_fix(server, max_threads)}",
        )
    warnings = _superuser_warnings(server, server_settings)
    if "sync_binlog" in server_settings and not server.log_bin:
        warnings.append("sync_binlog has no effect: binary logging is off (log_bin=OFF)")
    return warnings


def _max_connections_fix(server: targets.ServerInfo, max_threads: int) -> str:
    if "server_version_num" in server.variables:  # PostgreSQL reads it at start only
        return " (PostgreSQL: in postgresql.conf, then restart the server)"
    return (
        f": the plan itself may set it (server settings: max_connections={max_threads + 1} "
        "or more, applied before the runs and put back after the batch)"
    )


def connections_allowed(server: targets.ServerInfo, server_settings: dict[str, list[str]]) -> int:
    """The connections the benchmark may open in its tightest cell. A max_connections
    axis is set before every cell, and every thread count meets every one of its values
    (the matrix is a cross product): its smallest value counts, not the server's current
    one. PostgreSQL keeps its reserved connections from a role that is not a superuser
    either way."""
    values = server_settings.get("max_connections")
    if not values:
        return server.max_connections
    reserved = int(server.variables.get("max_connections", "0") or 0) - server.max_connections
    return min(int(v) for v in values) - reserved


def _superuser_warnings(
    server: targets.ServerInfo, server_settings: dict[str, list[str]]
) -> list[str]:
    """PostgreSQL changes settings with ALTER SYSTEM: a superuser's privilege, which
    PostgreSQL 15 and later can also grant per setting."""
    if not server_settings or server.variables.get("is_superuser") != "off":
        return []
    names = ", ".join(sorted(server_settings))
    if int(server.variables.get("server_version_num", "0") or 0) < 150000:
        raise InvalidInput(
            "server_settings",
            f"the target's PostgreSQL account is not a superuser: it cannot change {names} "
            "with ALTER SYSTEM; connect the target as a superuser",
        )
    return [
        f"the target's PostgreSQL account is not a superuser: changing {names} needs "
        "GRANT ALTER SYSTEM ON PARAMETER for each of them"
    ]


def prepared_statements_check(
    server: targets.ServerInfo,
    server_settings: dict[str, list[str]],
    *,
    test: str,
    max_threads: int,
    statements: int,
) -> tuple[str, str] | None:
    """Prepared-statement tests hold threads x tables x statements on the server; beyond
    max_prepared_stmt_count the threads fail to start with error 1461. (status, message)
    of the preflight check, or None when there is nothing to say. A warning, not a refusal:
    other sessions' statements count too, and the server's value may change before the run."""
    allowed = _statements_allowed(server, server_settings)
    if not statements or allowed is None:
        return None
    needs = f"{test} at threads={max_threads} prepares up to {statements} statements"
    if statements <= allowed:
        if "max_prepared_stmt_count" in server_settings:  # the plan's fix, confirmed
            return "ok", f"{needs}; max_prepared_stmt_count={allowed} holds them"
        return None
    return (
        "warning",
        f"{needs} but max_prepared_stmt_count is {allowed}: the runs would fail with error "
        f"1461; set max_prepared_stmt_count={statements} or more in the plan's server "
        "settings (applied before the runs, put back after the batch), or use "
        "--db-ps-mode=disable, fewer threads or fewer tables",
    )


def _statements_allowed(
    server: targets.ServerInfo, server_settings: dict[str, list[str]]
) -> int | None:
    """The tightest limit of the batch: a plan's max_prepared_stmt_count axis meets every
    thread count (the matrix is a cross product), so its smallest value counts."""
    values = server_settings.get("max_prepared_stmt_count")
    if values:
        return min(int(v) for v in values)
    current = server.variables.get("max_prepared_stmt_count")
    return int(current) if current and current.isdigit() else None
