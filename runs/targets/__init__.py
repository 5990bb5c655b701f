"""The only place that talks SQL to a server under test.

It applies server settings from an allow-list, reads them back to prove they took, and
restores the originals; it samples the server's status counters; it keeps the marker of
a reusable data set. Values are validated before they reach SQL, and names only ever come
from the allow-list, so no user text is spliced into a statement.

`connect(connection)` picks the adapter from the engine: MySQL and MariaDB
(runs/targets/mysql.py) or PostgreSQL (runs/targets/postgres.py); both answer the
ServerTarget interface. What a PostgreSQL account that is not a superuser must be granted
to change settings, each privilege with its GRANT, is runs/targets/postgres_privileges.py.
Where a server keeps its redo log or WAL and how it writes it, for the sync probe, is
runs/targets/sync_probe.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager

from django.conf import settings

from runs.errors import InvalidInput
from runs.models import Target
from runs.sysbench.command import Connection, check_connection
from runs.targets.base import (
    MARKER_TABLE,
    MOVING_VARIABLES,
    SYSTEM_SCHEMAS,
    Applied,
    FsyncTiming,
    RestartFacts,
    ServerInfo,
    ServerTarget,
    SettingNotApplied,
    TargetError,
    check_database_name,
)
from runs.targets.mysql import MYSQL_COUNTERS, MySQLTarget, connect_mysql, mysql_missing_counters
from runs.targets.mysql_settings import (
    MYSQL_SETTINGS,
    NEEDS_RESTART,
    Setting,
    validate_mysql_settings,
)
from runs.targets.postgres import PostgresTarget, connect_postgres
from runs.targets.postgres_settings import (
    POSTGRES_NEEDS_RESTART,
    POSTGRES_SETTINGS,
    PgSetting,
    validate_postgres_settings,
)

__all__ = [
    "MARKER_TABLE",
    "MOVING_VARIABLES",
    "MYSQL_COUNTERS",
    "MYSQL_SETTINGS",
    "NEEDS_RESTART",
    "POSTGRES_NEEDS_RESTART",
    "POSTGRES_SETTINGS",
    "SYSTEM_SCHEMAS",
    "Applied",
    "FsyncTiming",
    "MySQLTarget",
    "PgSetting",
    "PostgresTarget",
    "RestartFacts",
    "ServerInfo",
    "ServerTarget",
    "Setting",
    "SettingNotApplied",
    "TargetError",
    "allowed_settings",
    "check_database_name",
    "connect",
    "connect_to",
    "connection_of",
    "missing_counters",
    "target_check",
    "validate_settings",
]


def connection_of(target: Target) -> Connection:
    """How sysbench and benchdash log in to a target (the password decrypted)."""
    return Connection(
        engine=target.engine,
        host=target.host,
        port=target.port,
        socket=target.socket,
        database=target.database,
        user=target.user,
        password=target.password,
    )


def connect_to(target: Target) -> AbstractContextManager[ServerTarget]:
    """Open a connection to a stored target, with the configured timeout."""
    return connect(connection_of(target), timeout=settings.BENCHDASH_TARGET_TIMEOUT)


def target_check(target: Target) -> None:
    """Refuse what sysbench or the drivers cannot use (a host that is not a host name, a
    port out of range...), naming the field: InvalidInput."""
    check_connection(connection_of(target))


@contextmanager
def connect(connection: Connection, *, timeout: int = 10) -> Iterator[ServerTarget]:
    """Open a connection to a target of any engine, with explicit timeouts."""
    try:
        check_connection(connection)
    except InvalidInput as e:
        raise TargetError(f"cannot connect: {e}", "correct it on the target's page") from None
    if connection.engine == "postgresql":
        with connect_postgres(connection, timeout=timeout) as pg:
            yield pg
    else:
        with connect_mysql(connection, timeout=timeout) as mysql:
            yield mysql


def validate_settings(engine: str, axes: Mapping[str, Iterable[object]]) -> dict[str, list[str]]:
    """Check a plan's server-settings axes against the allow-list of the engine."""
    if engine == "postgresql":
        return validate_postgres_settings(axes)
    return validate_mysql_settings(axes)


def missing_counters(engine: str, reported: Iterable[str]) -> list[str]:
    """The expected counters this server did not report, said on the run's page."""
    if engine == "postgresql":
        return []
    return mysql_missing_counters(reported)


def allowed_settings(engine: str) -> list[str]:
    """The names a plan may put on its server-settings axes, for forms and the API."""
    return sorted(POSTGRES_SETTINGS if engine == "postgresql" else MYSQL_SETTINGS)
