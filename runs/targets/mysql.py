"""MySQL and MariaDB servers under test: SET GLOBAL from the allow-list (mysql_settings.py),
status counters."""

from __future__ import annotations

import select
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import MySQLdb

from runs.analysis.why.innodb import parse_semaphores
from runs.sysbench.command import Connection
from runs.targets import inside
from runs.targets.base import (
    MARKER_DDL,
    MARKER_DELETE,
    MARKER_DROP,
    MARKER_INSERT,
    MARKER_SELECT,
    MARKER_TABLE,
    Applied,
    FsyncTiming,
    RestartFacts,
    ServerInfo,
    SettingNotApplied,
    TargetError,
    in_datadir,
    marker_from_row,
    marker_row,
    sbtest_names,
)
from runs.targets.mysql_errors import mysql_errors
from runs.targets.mysql_settings import MYSQL_SETTINGS
from runs.targets.postgres_privileges import MissingPrivilege

# Status counters sampled while sysbench runs: cumulative, except the two Threads_ gauges.
# Names a server does not have are simply absent from its readings.
MYSQL_COUNTERS = (
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_commit",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Innodb_os_log_fsyncs",  # gone in MariaDB 10.8+, whose Innodb_data_fsyncs count the log's
    "Innodb_data_fsyncs",
    "Innodb_log_writes",
    "Rows_read",  # MariaDB: rows read by any engine (it dropped Innodb_rows_read)
    "Handler_read_key",
    "Handler_read_next",
    "Handler_read_rnd_next",
    "Binlog_commits",  # MariaDB only
    # MariaDB: each group commit writes the binary log once, and with sync_binlog=N syncs
    # it every Nth time: the binlog's fsyncs when performance_schema does not count them.
    "Binlog_group_commits",
    "Binlog_bytes_written",  # MariaDB only
    "Innodb_os_log_written",
    "Innodb_data_written",
    "Threads_running",
    "Threads_connected",
)


# What the SEMAPHORES section of SHOW ENGINE INNODB STATUS gives, when a server prints it.
SPIN_WAITS = "InnoDB spin waits (MariaDB 10.6 and later print no SEMAPHORES figures)"


def mysql_missing_counters(reported: Iterable[str]) -> list[str]:
    """The counters benchdash reads that this server did not report: its version or
    build does not have them (MariaDB 10.8+ dropped Innodb_rows_read and
    Innodb_os_log_fsyncs; MySQL has no Binlog_commits), or the account may not read them."""
    names = set(reported)
    missing = [name for name in MYSQL_COUNTERS if name not in names]
    if not any(name.startswith("innodb_") and "spin" in name for name in names):
        missing.append(SPIN_WAITS)
    return missing


# Written once: the names are benchdash's own (a reading a second costs no formatting).
_STATUS_COUNTERS = "SHOW GLOBAL STATUS WHERE Variable_name IN ({})".format(
    ", ".join(f"'{name}'" for name in MYSQL_COUNTERS)
)

# A reading of @@sync_binlog, among the counters: a level (a gauge), read once a connection,
# as the setting is applied before a run and stays through it.
SYNC_BINLOG = "sync_binlog"

# performance_schema's file instruments → the names of their counters
FILE_TIMERS = {
    "wait/io/file/innodb/innodb_log_file": "log_file",
    "wait/io/file/sql/binlog": "binlog",
    "wait/io/file/innodb/innodb_data_file": "data_file",
}


_FILE_TIMERS_SQL = (
    "SELECT EVENT_NAME, COUNT_MISC, SUM_TIMER_MISC, SUM_NUMBER_OF_BYTES_WRITE "
    "FROM performance_schema.file_summary_by_event_name WHERE EVENT_NAME IN (%s, %s, %s)"
)
PS_OFF_FIX = (
    "set performance_schema=ON under [mariadbd] or [mysqld] in the server's my.cnf and "
    "restart the server: it cannot be turned on at run time"
)


_READ_ONLY = (
    "SELECT LOWER(VARIABLE_NAME), READ_ONLY FROM information_schema.SYSTEM_VARIABLES "
    "WHERE LOWER(VARIABLE_NAME) IN ({})"
)


class MySQLTarget:
    """A connection to a MySQL or MariaDB server under test."""

    def __init__(self, db: Any, connection: Connection) -> None:
        self._db = db
        self.connection = connection
        self._innodb_status = True
        self._timing: FsyncTiming | None = None  # performance_schema on and readable?
        self._sync_binlog: float | None = None

    def server_info(self) -> ServerInfo:
        variables = self._variables()
        return ServerInfo(version=variables.get("version", ""), variables=variables)

    def _variables(self) -> dict[str, str]:
        return {str(name): str(value) for name, value in self._query("SHOW GLOBAL VARIABLES")}

    def may_change_settings(self) -> tuple[bool, str]:
        """Whether this account may SET GLOBAL, from its global privileges: SUPER, or
        SYSTEM_VARIABLES_ADMIN on MySQL 8. Read, never tried: trying would change the server."""
        # GRANTEE reads 'user'@'host', CURRENT_USER() user@host.
        rows = self._query(
            "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = "
            "CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', "
            "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')"
        )
        granted = sorted({str(r[0]).upper() for r in rows})
        enough = [p for p in granted if p in ("SUPER", "SYSTEM_VARIABLES_ADMIN")]
        if enough:
            return True, f"granted {', '.join(enough)}"
        return False, "the account has neither SUPER nor SYSTEM_VARIABLES_ADMIN"

    def missing_privileges(self, names: Iterable[str]) -> list[MissingPrivilege]:
        """Nothing checked one by one here: SET GLOBAL takes one privilege, which
        may_change_settings reads (PostgreSQL's are several: postgres_privileges.py)."""
        return []

    def read(self, names: Iterable[str]) -> dict[str, str]:
        wanted = sorted(set(names))
        if not wanted:
            return {}
        placeholders = ", ".join(["%s"] * len(wanted))
        rows = self._query(
            f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({placeholders})",
            wanted,
        )
        return {str(name): str(value) for name, value in rows}

    def originals(self, names: Iterable[str]) -> dict[str, Any]:
        """The values to put back at the end: SET GLOBAL leaves nothing else behind."""
        return self.read(names)

    def apply(self, settings: Mapping[str, str]) -> Applied:
        """SET GLOBAL each setting, read them back with every other variable (one query),
        and refuse if one did not take."""
        for name, value in settings.items():
            setting = MYSQL_SETTINGS[name]
            canonical = setting.normalise(value)
            # The name comes from the allow-list, the value is a validated number or ON/OFF
            # passed as a parameter.
            self._execute(f"SET GLOBAL {setting.name} = %s", [setting.sql_value(canonical)])
        variables = self._variables()
        verified = {name: variables[name] for name in settings if name in variables}
        for name, value in settings.items():
            setting = MYSQL_SETTINGS[name]
            actual = verified.get(name)
            if actual is None or setting.normalise(actual) != setting.normalise(value):
                raise SettingNotApplied(
                    f"{name}={value} did not take: the server reports {actual}",
                    "check that the account may SET GLOBAL and that no other session changes it",
                )
        return Applied(verified=verified, variables=variables)

    def restore(self, originals: Mapping[str, Any]) -> None:
        for name, value in originals.items():
            setting = MYSQL_SETTINGS.get(name)
            if setting is not None:
                self._execute(
                    f"SET GLOBAL {setting.name} = %s", [setting.sql_value(setting.normalise(value))]
                )

    def sbtest_tables(self) -> list[str]:
        rows = self._query(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = %s AND table_name LIKE 'sbtest%%'",
            [self.connection.database],
        )
        return [str(r[0]) for r in rows]

    def row_counts(self, tables: Iterable[str]) -> dict[str, int]:
        return {
            # sbtest_names lets only sysbench's own table names through
            name: int(self._query(f"SELECT COUNT(*) FROM `{name}`")[0][0])  # noqa: S608
            for name in sbtest_names(tables)
        }

    def dataset_marker(self) -> dict[str, Any] | None:
        exists = self._query(
            "SELECT COUNT(*) FROM information_schema.tables "
            "WHERE table_schema = %s AND table_name = %s",
            [self.connection.database, MARKER_TABLE],
        )
        if not exists[0][0]:
            return None
        rows = self._query(MARKER_SELECT)
        return marker_from_row(rows[0]) if rows else None

    def dataset_mark(self, marker: Mapping[str, Any]) -> None:
        self._execute(MARKER_DDL, [])
        self._execute(MARKER_DELETE, [])
        self._execute(MARKER_INSERT, marker_row(marker))

    def dataset_forget(self) -> None:
        self._execute(MARKER_DROP, [])

    def dataset_drop(self) -> list[str]:
        tables = sbtest_names(self.sbtest_tables())
        for name in tables:  # sbtest_names lets only sysbench's own table names through
            self._execute(f"DROP TABLE IF EXISTS `{name}`", [])
        self.dataset_forget()
        return tables

    def status_counters(self) -> dict[str, float]:
        """GLOBAL STATUS counters and the SEMAPHORES figures of the InnoDB monitor."""
        values = {str(name): float(value) for name, value in self._query(_STATUS_COUNTERS)}
        if self._innodb_status:
            try:
                status = self._query("SHOW ENGINE INNODB STATUS")
            except TargetError:
                self._innodb_status = False  # no PROCESS privilege: the counters still count
            else:
                text = str(status[0][2]) if status else ""
                semaphores = parse_semaphores(text)
                # MariaDB 10.6 and later print none: the monitor is not read again (a
                # round trip a second, and its mutex on the server, for nothing).
                self._innodb_status = bool(semaphores)
                values.update({f"innodb_{k}": v for k, v in semaphores.items()})
        values.update(self._file_sync_timers())
        values.update(self._sync_binlog_reading())
        return values

    def reads_later(self) -> bool:
        """Whether a reading is one statement (no InnoDB monitor to read, as on MariaDB
        10.6 and later, and no performance_schema timers), which the worker can send when
        it is awake and read at its next wake (send_reading, receive_reading)."""
        return not self._innodb_status and not self.fsync_timing().readable

    def send_reading(self) -> None:
        """A reading's statement sent, its answer left on the connection."""
        with mysql_errors(self.connection):
            self._db.send_query(_STATUS_COUNTERS)

    def reading_ready(self) -> bool:
        """Whether the answer to the reading sent has begun to come (a kilobyte or two, in
        one write of the server's): a look, never a wait."""
        poller = select.poll()
        poller.register(self._db.fileno(), select.POLLIN)
        return bool(poller.poll(0))

    def receive_reading(self) -> dict[str, float]:
        """The reading sent: what status_counters reads, when one statement is all of it."""
        with mysql_errors(self.connection):
            self._db.read_query_result()
            rows = self._db.store_result().fetch_row(0)
        values = {str(name): float(value) for name, value in rows}
        values.update(self._sync_binlog_reading())
        return values

    def fsync_timing(self) -> FsyncTiming:
        """Whether performance_schema's file timers can be read, and when not, why: off
        (a restart with performance_schema=ON) or not granted (error 1142: the GRANT)."""
        if self._timing is None:
            self._timing = self._read_timing()
        return self._timing

    def _read_timing(self) -> FsyncTiming:
        rows = self._query("SELECT @@performance_schema")
        if not (rows and str(rows[0][0]) in ("1", "ON")):
            return FsyncTiming(False, "performance_schema is off", PS_OFF_FIX)
        try:
            self._query(_FILE_TIMERS_SQL + " LIMIT 0", list(FILE_TIMERS))
        except TargetError as e:
            if e.code != 1142:  # a server without the table: said, and the counters count
                return FsyncTiming(False, f"performance_schema cannot be read: {e.message}")
            account = self._account()
            return FsyncTiming(
                False,
                f"the account {account} may not read performance_schema (error 1142)",
                f"GRANT SELECT ON performance_schema.* TO {account}",
            )
        return FsyncTiming(True)

    def inside_readable(self) -> inside.InsideReadable:
        """Whether performance_schema's wait summaries and digests can be read."""
        return inside.mysql_readable(self._query)

    def inside_snapshot(self) -> dict[str, Any]:
        """Its wait summaries and statement digests now (runs/targets/inside.py)."""
        return inside.mysql_snapshot(self._query)

    def waits_now(self) -> list[tuple[Any, ...]]:
        return []  # the wait summaries' deltas say it: nothing is sampled

    def _account(self) -> str:
        """The account as GRANT names it: 'user'@'host', from CURRENT_USER()."""
        user, _, host = str(self._query("SELECT CURRENT_USER()")[0][0]).rpartition("@")
        return f"'{user}'@'{host}'"

    def restart_facts(self, names: Iterable[str]) -> RestartFacts:
        """MariaDB says which variables are read-only (fixed at start); MySQL has no
        SYSTEM_VARIABLES table: there every name asked for counts as restart-only."""
        wanted = sorted({name.lower() for name in names})
        row = self._query("SELECT @@version, @@datadir, @@log_error")[0]
        version, datadir, log = (str(v or "") for v in row)
        values = self.read(wanted)
        restart_only = frozenset(values)
        if wanted:
            try:  # placeholders only: the names are params
                rows = self._query(_READ_ONLY.format(", ".join(["%s"] * len(wanted))), wanted)
            except TargetError:
                rows = []  # MySQL: no such table
            if rows:
                restart_only = frozenset(str(n) for n, ro in rows if str(ro).upper() == "YES")
        log = in_datadir(datadir, log) if log != "stderr" else ""  # to stderr: no file
        return RestartFacts(version, datadir, values, restart_only, log)

    def pid_file(self) -> str:
        rows = self._query("SELECT @@pid_file")
        return str(rows[0][0] or "") if rows else ""

    def _file_sync_timers(self) -> dict[str, float]:
        """The server's own timing of its file syncs, from performance_schema when it is on
        (off by default in MariaDB): count, picoseconds and bytes written per kind of
        file. MariaDB 10.8+ does not instrument its redo log; its data files' syncs time
        the same disk. "Misc" operations of these files are almost all syncs."""
        if not self.fsync_timing().readable:
            return {}  # the counters still count; fsync_timing() says why these do not
        values = {}
        for event, count, picoseconds, written in self._query(_FILE_TIMERS_SQL, list(FILE_TIMERS)):
            name = FILE_TIMERS[str(event)]
            values[f"pfs_{name}_syncs"] = float(count)
            values[f"pfs_{name}_sync_ps"] = float(picoseconds)
            values[f"pfs_{name}_bytes_written"] = float(written)
        return values

    def _sync_binlog_reading(self) -> dict[str, float]:
        if self._sync_binlog is None:
            self._sync_binlog = float(self._query("SELECT @@sync_binlog")[0][0])
        return {SYNC_BINLOG: self._sync_binlog}

    def _query(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        with mysql_errors(self.connection):
            cursor = self._db.cursor()
            cursor.execute(sql, params)
            return list(cursor.fetchall())

    def _execute(self, sql: str, params: list[Any]) -> None:
        with mysql_errors(self.connection):
            self._db.cursor().execute(sql, params)


@contextmanager
def connect_mysql(connection: Connection, *, timeout: int = 10) -> Iterator[MySQLTarget]:
    """Open a connection to a MySQL/MariaDB target, with explicit timeouts."""
    kwargs: dict[str, Any] = {
        "user": connection.user,
        "password": connection.password,
        "database": connection.database,
        "connect_timeout": timeout,
        "read_timeout": timeout * 6,
        "write_timeout": timeout * 6,
        "autocommit": True,
    }
    if connection.socket:
        kwargs["unix_socket"] = connection.socket
    else:
        kwargs["host"] = connection.host
        kwargs["port"] = connection.port or 3306
    with mysql_errors(connection):
        db = MySQLdb.connect(**kwargs)
    try:
        yield MySQLTarget(db, connection)
    finally:
        db.close()
