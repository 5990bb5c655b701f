"""What every server under test shares: errors, what a server says about itself, and the
SQL of benchdash's data-set marker table."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from runs.credentials import variables_shown
from runs.errors import InvalidInput
from runs.targets.postgres_privileges import MissingPrivilege

SYSTEM_SCHEMAS = frozenset({"mysql", "information_schema", "performance_schema", "sys"})
SBTEST_TABLE = re.compile(r"sbtest[1-9][0-9]{0,6}")

# One row describing the sysbench data set in the target database, so that a later batch
# can tell whether the tables there are the ones it would prepare.
MARKER_TABLE = "benchdash_dataset"
MARKER_COLUMNS = (
    "family",
    "tables_count",
    "table_size",
    "sysbench_version",
    "dataset_key",
    "batch_id",
    "prepared_at",
)
MARKER_DDL = (
    f"CREATE TABLE IF NOT EXISTS {MARKER_TABLE} ("
    "id INTEGER NOT NULL PRIMARY KEY, "
    "family VARCHAR(40) NOT NULL, "
    "tables_count INTEGER NOT NULL, "
    "table_size BIGINT NOT NULL, "
    "sysbench_version VARCHAR(200) NOT NULL, "
    "dataset_key TEXT NOT NULL, "
    "batch_id BIGINT, "
    "prepared_at VARCHAR(40) NOT NULL)"
)


class TargetError(Exception):
    """The server under test refused or could not be reached; the message says which."""

    def __init__(self, message: str, hint: str = "", code: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code  # the server's error number, when it gave one (MySQL: 1142...)


class SettingNotApplied(TargetError):
    pass


@dataclass(frozen=True)
class ServerInfo:
    """A server's version and variables, recorded with the batch: a credential's value
    hidden (MariaDB shows report_password as set; PostgreSQL primary_conninfo to a
    superuser)."""

    version: str
    variables: dict[str, str]
    details: dict[str, Any] = field(default_factory=dict)  # recorded with the batch, as is

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables", variables_shown(self.variables))

    @property
    def log_bin(self) -> bool:
        return self.variables.get("log_bin", "OFF").upper() == "ON"

    @property
    def max_connections(self) -> int:
        """Connections the account may open: PostgreSQL keeps some for superusers."""
        total = int(self.variables.get("max_connections", "0"))
        if self.variables.get("is_superuser") == "off":
            for reserved in ("superuser_reserved_connections", "reserved_connections"):
                total -= int(self.variables.get(reserved, "0") or 0)
        return total


# Server variables that change by themselves while a server works (the binary log's and
# replication's positions): not a difference a run's settings made.
MOVING_VARIABLES = frozenset(
    {
        "gtid_binlog_pos",
        "gtid_binlog_state",
        "gtid_current_pos",
        "gtid_slave_pos",
        "gtid_executed",
        "gtid_purged",
    }
)


@dataclass(frozen=True)
class FsyncTiming:
    """Whether the server's own timing of its fsyncs can be read (MariaDB/MySQL:
    performance_schema; PostgreSQL: pg_stat_wal with track_wal_io_timing): when not, why
    (`reason`) and the statement or change that makes it readable (`fix`)."""

    readable: bool
    reason: str = ""
    fix: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"readable": self.readable, "reason": self.reason, "fix": self.fix}


@dataclass(frozen=True)
class Applied:
    """What applying settings read back, in the one query that verifies them: the
    settings as the server now reports them, and every server variable as server_info()
    reports it, to tell what a run saw changed from its batch's snapshot."""

    verified: dict[str, str]
    variables: dict[str, str]

    def __post_init__(self) -> None:  # compared with server_info()'s: hidden alike
        object.__setattr__(self, "variables", variables_shown(self.variables))


@dataclass(frozen=True)
class RestartFacts:
    """What a restart is checked against: the server's version and data directory, and
    per setting asked for its value as the server shows it and whether only a restart
    changes it (MariaDB: SYSTEM_VARIABLES.READ_ONLY; PostgreSQL: context 'postmaster');
    a name the server does not know is absent."""

    version: str
    datadir: str
    values: dict[str, str]
    restart_only: frozenset[str]
    # Where the server writes its errors, on its machine; "" when it does not say (to its
    # standard error: a service manager's journal) or the user may not ask.
    error_log: str = ""


def in_datadir(datadir: str, path: str) -> str:
    """A path the server gives relative to its data directory, made absolute."""
    return posixpath.normpath(posixpath.join(datadir, path)) if path else ""


class ServerTarget(Protocol):
    """What execution, services and the data-set and counter services ask of a target."""

    def server_info(self) -> ServerInfo: ...

    def may_change_settings(self) -> tuple[bool, str]: ...

    def missing_privileges(self, names: Iterable[str]) -> list[MissingPrivilege]: ...

    def read(self, names: Iterable[str]) -> dict[str, str]: ...

    def originals(self, names: Iterable[str]) -> dict[str, Any]: ...

    def apply(self, settings: Mapping[str, str]) -> Applied: ...

    def restore(self, originals: Mapping[str, Any]) -> None: ...

    def sbtest_tables(self) -> list[str]: ...

    def row_counts(self, tables: Iterable[str]) -> dict[str, int]: ...

    def dataset_marker(self) -> dict[str, Any] | None: ...

    def dataset_mark(self, marker: Mapping[str, Any]) -> None: ...

    def dataset_forget(self) -> None: ...

    def dataset_drop(self) -> list[str]:
        """sysbench's tables and their marker dropped, as its cleanup would: for when
        the load host that should run the cleanup is gone. The tables it dropped."""
        ...

    def status_counters(self) -> dict[str, float]: ...

    def fsync_timing(self) -> FsyncTiming: ...

    def inside_readable(self) -> FsyncTiming:
        """Whether its wait events and statement digests can be read (runs/targets/inside.py):
        when not, why and the statements that fix it."""
        ...

    def inside_snapshot(self) -> dict[str, Any]: ...

    def waits_now(self) -> list[tuple[Any, ...]]: ...
    def restart_facts(self, names: Iterable[str]) -> RestartFacts: ...

    def pid_file(self) -> str:
        """The file on the server's machine that holds its process id; "" when the
        server does not say (the host metrics then go without the database's own CPU)."""
        ...


@runtime_checkable
class ReadsLater(Protocol):
    """A target whose counter reading can be one statement, sent while the worker is awake
    and read at its next wake: the worker never sleeps on the server for it
    (runs/targets/counters.py)."""

    def reads_later(self) -> bool: ...

    def send_reading(self) -> None: ...

    def reading_ready(self) -> bool: ...

    def receive_reading(self) -> dict[str, float]: ...


def check_database_name(database: str, engine: str) -> None:
    """Refuse the system schemas: sysbench's prepare and cleanup must never touch them."""
    if engine != "postgresql" and database.lower() in SYSTEM_SCHEMAS:
        raise InvalidInput(
            "database", f"{database} is a system schema; use a database of its own, e.g. sbtest"
        )


def sbtest_names(tables: Iterable[str]) -> list[str]:
    """Only names sysbench gives its tables ever reach a statement."""
    names = sorted(set(tables))
    for name in names:
        if not SBTEST_TABLE.fullmatch(name):
            raise ValueError(f"{name!r} is not a sysbench table")
    return names


def marker_row(marker: Mapping[str, Any]) -> list[Any]:
    return [marker[column] for column in MARKER_COLUMNS]


def marker_from_row(row: tuple[Any, ...]) -> dict[str, Any]:
    marker = dict(zip(MARKER_COLUMNS, row, strict=True))
    marker["tables_count"] = int(marker["tables_count"])
    marker["table_size"] = int(marker["table_size"])
    return marker


# Constant statements: the table and column names above are benchdash's own.
MARKER_SELECT = (
    "SELECT family, tables_count, table_size, sysbench_version, dataset_key, batch_id, "
    "prepared_at FROM benchdash_dataset WHERE id = 1"
)
MARKER_INSERT = (
    "INSERT INTO benchdash_dataset (id, family, tables_count, table_size, sysbench_version, "
    "dataset_key, batch_id, prepared_at) VALUES (1, %s, %s, %s, %s, %s, %s, %s)"
)
MARKER_DELETE = "DELETE FROM benchdash_dataset"
MARKER_DROP = "DROP TABLE IF EXISTS benchdash_dataset"


class _Normalises(Protocol):
    def normalise(self, value: object) -> str: ...


def check_allow_list(
    axes: Mapping[str, Iterable[object]],
    *,
    allowed: Mapping[str, _Normalises],
    needs_restart: frozenset[str],
    kind: str,
) -> dict[str, list[str]]:
    """Check every name against an allow-list and normalise every value; a refusal says
    whether the setting needs a restart and lists what may change."""
    normalised: dict[str, list[str]] = {}
    for name, values in axes.items():
        setting = allowed.get(name)
        if setting is None:
            names = ", ".join(sorted(allowed))
            if name in needs_restart:
                message = f"{name} needs a server restart; a benchmark can change only: {names}"
            else:
                message = f"{name} is not on the allow-list of {kind} settings; allowed: {names}"
            raise InvalidInput("server_settings", message)
        normalised[name] = [setting.normalise(v) for v in values]
    return normalised
