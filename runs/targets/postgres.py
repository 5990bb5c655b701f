"""PostgreSQL servers under test: ALTER SYSTEM from an allow-list, pg_stat counters.

A setting is written with ALTER SYSTEM (into postgresql.auto.conf) and takes effect with
pg_reload_conf(); it is read back from pg_settings, where values come in the setting's
own unit (checkpoint_timeout in s, max_wal_size in MB...), so both sides are compared in
a canonical form. At the end every setting goes back to what postgresql.auto.conf said
before: ALTER SYSTEM RESET when it held nothing for it, so no trace of benchdash stays.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import sql

from runs.credentials import variables_shown
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
from runs.targets.postgres_privileges import MissingPrivilege, grants_text, missing_privileges
from runs.targets.postgres_settings import (
    POSTGRES_SETTINGS,
    canonical_setting,
    settings_shown,
)

RELOAD_WAIT_S = 5.0  # pg_reload_conf() signals; the new value shows up a moment later


# pg_stat_database columns sampled while sysbench runs, all cumulative.
_DATABASE_COUNTERS = (
    "xact_commit",
    "xact_rollback",
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "deadlocks",
)


PG_TIMING_FIX = "ALTER SYSTEM SET track_wal_io_timing = on; SELECT pg_reload_conf();"


class PostgresTarget:
    """A connection to a PostgreSQL server under test."""

    def __init__(self, db: psycopg.Connection[Any], connection: Connection) -> None:
        self._db = db
        self.connection = connection
        self._stat_views: list[tuple[str, str]] | None = None

    # --- what the server is -------------------------------------------------------------

    def server_info(self) -> ServerInfo:
        """Every setting as PostgreSQL prints it (SHOW's form, units included) as the
        variables, and every pg_settings row, recorded with the batch."""
        rows = self._settings()
        variables = settings_shown(rows)
        pg_settings = {
            # a credential's value never kept (primary_conninfo's password): as ServerInfo's
            str(name): {"setting": variables_shown({name: setting})[name], "unit": unit,
                        "source": source}
            for name, setting, unit, source, _ in rows
        }  # fmt: skip
        # hidden from both, and what decides whether ALTER SYSTEM and reserved slots are ours
        variables.setdefault("is_superuser", str(self._scalar("SHOW is_superuser")))
        return ServerInfo(
            version=variables.get("server_version", ""),
            variables=variables,
            details={"pg_settings": pg_settings},
        )

    def may_change_settings(self) -> tuple[bool, str]:
        """Whether this account may ALTER SYSTEM the allow-listed settings: a superuser, or
        (PostgreSQL 15 and later) a role granted ALTER SYSTEM on each."""
        if self._scalar("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"):
            return True, "superuser"
        if int(self._scalar("SHOW server_version_num")) < 150000:
            return False, "not a superuser (before PostgreSQL 15 only superusers ALTER SYSTEM)"
        granted = [
            name
            for name in sorted(POSTGRES_SETTINGS)
            if self._scalar("SELECT has_parameter_privilege(%s, 'ALTER SYSTEM')", [name])
        ]
        if len(granted) == len(POSTGRES_SETTINGS):
            return True, "granted ALTER SYSTEM on every allow-listed setting"
        if granted:
            return False, f"granted ALTER SYSTEM on {', '.join(granted)} only"
        return False, "not a superuser, and granted ALTER SYSTEM on no setting"

    def missing_privileges(self, names: Iterable[str]) -> list[MissingPrivilege]:
        """Every privilege this account lacks to change the settings `names` (reading
        postgresql.auto.conf, reloading, ALTER SYSTEM on each), each checked on its own,
        with its GRANT (postgres_privileges.py); none for a superuser or no setting."""
        names = list(names)
        if not names or self._scalar("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"):
            return []
        return missing_privileges(
            self._scalar,
            names=names,
            role=self.connection.user,
            database=self.connection.database,
            version=int(self._scalar("SHOW server_version_num")),
        )

    def read(self, names: Iterable[str]) -> dict[str, str]:
        """Current values from pg_settings; allow-listed ones in canonical form."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        rows = self._query(
            "SELECT name, setting, unit FROM pg_settings WHERE name = ANY(%s)", [wanted]
        )
        return {str(name): canonical_setting(name, setting, unit) for name, setting, unit in rows}

    def _settings(self) -> list[tuple[Any, ...]]:
        """Every setting: name, setting, unit, source, and its value as SHOW prints it."""
        return self._query(
            "SELECT name, setting, unit, source, current_setting(name) FROM pg_settings"
        )

    # --- settings --------------------------------------------------------------------------

    def originals(self, names: Iterable[str]) -> dict[str, Any]:
        """Per setting, its value now and what postgresql.auto.conf holds for it (None when
        nothing): the restore puts that file back as it was."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        self._check_may_alter(wanted)  # before the first of them: all that lacks, at once
        current = self.read(wanted)
        auto_conf = self._auto_conf(wanted)
        return {
            name: {"value": current.get(name), "auto_conf": auto_conf.get(name)} for name in wanted
        }

    def apply(self, settings: Mapping[str, str]) -> Applied:
        """ALTER SYSTEM each setting, reload, read them back with every other setting,
        refuse if one did not take."""
        wanted = {name: POSTGRES_SETTINGS[name].normalise(v) for name, v in settings.items()}
        self._check_may_alter(wanted)
        for name, canonical in wanted.items():
            self._alter_system(name, canonical)
        self._execute("SELECT pg_reload_conf()")
        verified, variables = self._await_values(wanted)
        for name, canonical in wanted.items():
            actual = verified.get(name)
            if actual != canonical:
                raise SettingNotApplied(
                    f"{name}={settings[name]} did not take: the server reports {actual}",
                    "a value set for the role or the database (ALTER ROLE/DATABASE ... SET) "
                    "overrides ALTER SYSTEM; check pg_db_role_setting",
                )
        return Applied(verified=verified, variables=variables)

    def restore(self, originals: Mapping[str, Any]) -> None:
        for name, original in originals.items():
            if name not in POSTGRES_SETTINGS:
                continue
            auto_conf = original.get("auto_conf") if isinstance(original, Mapping) else original
            if auto_conf is None:
                self._execute(sql.SQL("ALTER SYSTEM RESET {}").format(sql.Identifier(name)))
            else:
                self._execute(
                    sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        sql.Identifier(name), sql.Literal(str(auto_conf))
                    )
                )
        self._execute("SELECT pg_reload_conf()")

    def _alter_system(self, name: str, canonical: str) -> None:
        # The name comes from the allow-list; the value is a validated canonical literal.
        statement = sql.SQL("ALTER SYSTEM SET {} = {}").format(
            sql.Identifier(name), sql.Literal(canonical)
        )
        try:
            self._execute(statement)
        except TargetError as e:
            raise SettingNotApplied(f"{name}={canonical}: {e.message}", e.hint) from None

    def _check_may_alter(self, names: Iterable[str]) -> None:
        missing = self.missing_privileges(names)
        if missing:
            user = self.connection.user
            raise SettingNotApplied(
                f"the PostgreSQL account {user!r} is not a superuser and lacks what changing "
                f"{', '.join(sorted(set(names)))} needs: " + "; ".join(m.what for m in missing),
                "connect the target as a superuser, or have a superuser run: "
                + grants_text(missing).replace("\n", " "),
            )

    def _auto_conf(self, names: list[str]) -> dict[str, str]:
        """What postgresql.auto.conf says for `names` (the last line of a name wins)."""
        try:
            rows = self._query(
                "SELECT name, setting FROM pg_file_settings "
                "WHERE sourcefile LIKE %s AND name = ANY(%s) ORDER BY seqno",
                ["%postgresql.auto.conf", names],
            )
        except TargetError as e:
            raise TargetError(
                f"cannot read postgresql.auto.conf through pg_file_settings: {e.message}",
                "a superuser grants it, connected to the target's database (membership in "
                "pg_read_all_settings does not open pg_file_settings): "
                + grants_text(
                    m for m in self.missing_privileges(names) if "file_settings" in m.grant
                ).replace("\n", " "),
            ) from None
        return {str(name): str(setting) for name, setting in rows}

    def _await_values(self, wanted: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """The wanted settings once they show (canonical), and every setting as SHOW prints
        it, from the same reading."""
        deadline = time.monotonic() + RELOAD_WAIT_S
        while True:
            rows = self._settings()
            current = {n: canonical_setting(n, s, u) for n, s, u, _, _ in rows if n in wanted}
            done = all(current.get(n) == v for n, v in wanted.items())
            if done or time.monotonic() > deadline:
                return current, settings_shown(rows)
            time.sleep(0.05)

    # --- the data set ------------------------------------------------------------------------

    def sbtest_tables(self) -> list[str]:
        rows = self._query(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_name LIKE %s",
            ["sbtest%"],
        )
        return [str(r[0]) for r in rows]

    def row_counts(self, tables: Iterable[str]) -> dict[str, int]:
        counts = {}
        for name in sbtest_names(tables):
            query = sql.SQL("SELECT COUNT(*) FROM {}").format(sql.Identifier(name))
            counts[name] = int(self._scalar(query))
        return counts

    def dataset_marker(self) -> dict[str, Any] | None:
        exists = self._scalar(
            "SELECT COUNT(*) FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_name = %s",
            [MARKER_TABLE],
        )
        if not exists:
            return None
        rows = self._query(MARKER_SELECT)
        return marker_from_row(rows[0]) if rows else None

    def dataset_mark(self, marker: Mapping[str, Any]) -> None:
        self._execute(MARKER_DDL)
        self._execute(MARKER_DELETE)
        self._execute(MARKER_INSERT, marker_row(marker))

    def dataset_forget(self) -> None:
        self._execute(MARKER_DROP)

    def dataset_drop(self) -> list[str]:
        tables = sbtest_names(self.sbtest_tables())
        for name in tables:
            self._execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
        self.dataset_forget()
        return tables

    # --- counters -----------------------------------------------------------------------------

    def status_counters(self) -> dict[str, float]:
        """pg_stat_database of the target database, pg_stat_bgwriter, and pg_stat_wal /
        pg_stat_checkpointer where the server has them; and the busy backends."""
        template = sql.SQL("SELECT {} FROM pg_stat_database WHERE datname = current_database()")
        columns = sql.SQL(", ").join(sql.Identifier(c) for c in _DATABASE_COUNTERS)
        row = self._query(template.format(columns))
        values = {f"db_{k}": _number(v) for k, v in zip(_DATABASE_COUNTERS, row[0], strict=True)}
        for view, prefix in self._available_stat_views():
            each = sql.SQL("SELECT * FROM {}").format(sql.Identifier("pg_catalog", view))
            values.update(self._numeric_row(each, prefix))
        active, total = self._query(
            "SELECT count(*) FILTER (WHERE state = 'active'), count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )[0]
        values["backends_active"], values["backends_total"] = float(active), float(total)
        return values

    def fsync_timing(self) -> FsyncTiming:
        """pg_stat_wal times its syncs only with track_wal_io_timing on (PostgreSQL 14+);
        a superuser turns it on without a restart."""
        setting = self._scalar("SELECT setting FROM pg_settings WHERE name = 'track_wal_io_timing'")
        if setting is None:
            return FsyncTiming(False, "this PostgreSQL (before 14) does not time its WAL syncs")
        if str(setting) != "on":
            return FsyncTiming(False, "track_wal_io_timing is off", PG_TIMING_FIX)
        return FsyncTiming(True)

    def inside_readable(self) -> inside.InsideReadable:
        """Whether pg_stat_statements is there; when not, the statements that install it."""
        return inside.pg_readable(self._query)

    def inside_snapshot(self) -> dict[str, Any]:
        version = int(self._scalar("SHOW server_version_num"))
        return inside.pg_snapshot(self._query, version_num=version)

    def waits_now(self) -> list[tuple[Any, ...]]:
        """The target database's active backends by what they wait on, now."""
        return self._query(inside.PG_WAITS_NOW)

    def restart_facts(self, names: Iterable[str]) -> RestartFacts:
        """Values as SHOW prints them; restart-only: the settings of context 'postmaster'."""
        version = str(self._scalar("SHOW server_version"))
        datadir = str(self._scalar("SELECT current_setting('data_directory')"))
        rows = self._query(
            "SELECT name, current_setting(name), context FROM pg_settings WHERE name = ANY(%s)",
            [sorted(set(names))],
        )
        values = {str(name): str(shown) for name, shown, _ in rows}
        restart_only = frozenset(str(name) for name, _, ctx in rows if ctx == "postmaster")
        return RestartFacts(version, datadir, values, restart_only, self._log_file(datadir))

    def _log_file(self, datadir: str) -> str:
        """The logging collector's file; "" when it is off or the user may not ask
        (pg_current_logfile is for superusers and pg_monitor)."""
        try:
            return in_datadir(datadir, str(self._scalar("SELECT pg_current_logfile()") or ""))
        except TargetError:
            return ""

    def pid_file(self) -> str:
        """postmaster.pid in the data directory, whose first line is the postmaster's id;
        "" for a user who may not read data_directory (pg_read_all_settings)."""
        try:
            directory = self._scalar("SELECT current_setting('data_directory')")
        except TargetError:
            return ""
        return f"{directory}/postmaster.pid" if directory else ""

    def _available_stat_views(self) -> list[tuple[str, str]]:
        if self._stat_views is None:
            names = {
                str(r[0])
                for r in self._query(
                    "SELECT viewname FROM pg_views WHERE schemaname = 'pg_catalog' "
                    "AND viewname IN ('pg_stat_bgwriter', 'pg_stat_wal', 'pg_stat_checkpointer')"
                )
            }
            views = [
                ("pg_stat_bgwriter", "bgwriter_"),
                ("pg_stat_wal", ""),  # its columns are named wal_*
                ("pg_stat_checkpointer", "checkpointer_"),
            ]
            self._stat_views = [(v, p) for v, p in views if v in names]
        return self._stat_views

    def _numeric_row(self, query: sql.Composed, prefix: str) -> dict[str, float]:
        with _pg_errors(self.connection):
            cursor = self._db.execute(query)
            row = cursor.fetchone()
            names = [d.name for d in cursor.description or []]
        if row is None:
            return {}
        return {
            f"{prefix}{name}": _number(value)
            for name, value in zip(names, row, strict=True)
            if isinstance(value, int | float | Decimal) and not isinstance(value, bool)
        }

    # --- plumbing -----------------------------------------------------------------------------

    def _query(self, query: Any, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        with _pg_errors(self.connection):
            return list(self._db.execute(query, params).fetchall())

    def _scalar(self, query: Any, params: list[Any] | None = None) -> Any:
        rows = self._query(query, params)
        return rows[0][0] if rows else None

    def _execute(self, query: Any, params: list[Any] | None = None) -> None:
        with _pg_errors(self.connection):
            self._db.execute(query, params)


def _number(value: Any) -> float:
    return float(value) if value is not None else 0.0


@contextmanager
def _pg_errors(connection: Connection) -> Iterator[None]:
    where = connection.socket or f"{connection.host}:{connection.port or 5432}"
    try:
        yield
    except psycopg.errors.InsufficientPrivilege as e:
        raise TargetError(
            f"{where}: {_first_line(e)}", "the account lacks a privilege this needs"
        ) from None
    except psycopg.OperationalError as e:
        raise TargetError(f"{where}: {_first_line(e)}", _hint(str(e))) from None
    except psycopg.Error as e:
        raise TargetError(f"{where}: {_first_line(e)}") from None


def _first_line(e: Exception) -> str:
    return " ".join(str(e).split("\n")[:2]).strip()


def _hint(text: str) -> str:
    for clue, hint in (
        ("password authentication failed", "check the target's user and password"),
        ("does not exist", "create the database or role on the server, or fix the target"),
        ("Connection refused", "check the host and port, and that the server is running"),
        ("could not translate host name", "check the host name"),
        ("too many clients", "raise max_connections on the server"),
        ("timeout expired", "check that the server is reachable from the worker"),
        ("no pg_hba.conf entry", "allow the worker's address in pg_hba.conf"),
    ):
        if clue in text:
            return hint
    return ""


@contextmanager
def connect_postgres(connection: Connection, *, timeout: int = 10) -> Iterator[PostgresTarget]:
    """Open a connection to a PostgreSQL target, with explicit timeouts."""
    with _pg_errors(connection):
        db = psycopg.connect(
            host=connection.socket or connection.host,
            port=connection.port or 5432,
            user=connection.user,
            password=connection.password or None,
            dbname=connection.database,
            connect_timeout=timeout,
            autocommit=True,
            application_name="benchdash",
            # every statement is bounded, as read_timeout bounds them on MySQL
            options=f"-c statement_timeout={timeout * 6 * 1000}",
        )
    try:
        yield PostgresTarget(db, connection)
    finally:
        db.close()
