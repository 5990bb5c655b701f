"""MySQL and MariaDB errors as benchdash's TargetError: where, the server's code and
words, and what to do about it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import MySQLdb

from runs.sysbench.command import Connection
from runs.targets.base import TargetError


@contextmanager
def mysql_errors(connection: Connection) -> Iterator[None]:
    where = connection.socket or f"{connection.host}:{connection.port}"
    try:
        yield
    except MySQLdb.OperationalError as e:
        code, text = (*e.args, "")[:2] if e.args else (0, str(e))
        raise TargetError(
            f"{where}: error {code}: {text}", _hint(int(code or 0)), int(code or 0)
        ) from None
    except MySQLdb.Error as e:
        code = e.args[0] if e.args and isinstance(e.args[0], int) else 0
        raise TargetError(f"{where}: {e}", code=code) from None


def _hint(code: int) -> str:
    return {
        1045: "check the target's user and password",
        1044: "grant the account access to the database",
        1049: "create the database on the server, or fix the target's database name",
        1227: "the account needs SUPER or SYSTEM_VARIABLES_ADMIN to change server settings",
        1040: "raise max_connections on the server",
        2002: "check the host, port or socket, and that the server is running",
        2003: "check the host and port, and that the server is running and reachable",
        2005: "check the host name",
        2013: "the server closed the connection; check its error log",
    }.get(code, "")
