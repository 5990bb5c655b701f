"""Whether a target's own fsync timing can be read, and when not, why and the fix: on
private MariaDBs (performance_schema off; on, with an account that may or may not read
it) and the private PostgreSQL (track_wal_io_timing)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from runs import targets
from runs.sysbench.command import Connection
from runs.targets.base import FsyncTiming
from tests.helpers import global_variable

pytestmark = pytest.mark.timeout(300)


def mariadb(server, database: str, user: str | None = None, password: str | None = None):
    return targets.connect(
        Connection(
            engine="mariadb", host=server.host, port=server.port, socket="", database=database,
            user=user or server.user, password=password or server.password,
        )
    )  # fmt: skip


@pytest.fixture
def ps_database(mariadb_ps_server) -> Iterator[str]:
    name = mariadb_ps_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    yield name
    mariadb_ps_server.drop_database(name)


@pytest.fixture
def reader(mariadb_ps_server, ps_database) -> Iterator[tuple[str, str]]:
    """An account that may use its database but not read performance_schema."""
    user = f"r{uuid.uuid4().hex[:8]}"
    mariadb_ps_server.execute(
        f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'pw'",
        f"GRANT ALL ON `{ps_database}`.* TO '{user}'@'127.0.0.1'",
    )
    yield user, "pw"
    mariadb_ps_server.execute(f"DROP USER '{user}'@'127.0.0.1'")


def test_performance_schema_off_says_so_and_how_to_turn_it_on(mariadb_server, mariadb_db):
    with mariadb(mariadb_server, mariadb_db) as db:
        timing = db.fsync_timing()
        counters = db.status_counters()

    assert timing == FsyncTiming(
        False,
        "performance_schema is off",
        "set performance_schema=ON under [mariadbd] or [mysqld] in the server's my.cnf and "
        "restart the server: it cannot be turned on at run time",
    )
    assert not any(name.startswith("pfs_") for name in counters)
    assert "Binlog_group_commits" in counters  # the binlog's syncs are counted without it
    assert counters["sync_binlog"] == float(global_variable(mariadb_server, "sync_binlog"))


def test_an_account_without_select_on_performance_schema_is_told_the_grant(
    mariadb_ps_server, ps_database, reader
):
    user, password = reader

    with mariadb(mariadb_ps_server, ps_database, user, password) as db:
        timing = db.fsync_timing()
        counters = db.status_counters()  # error 1142 is kept, not raised: counters count

    assert timing.readable is False
    assert (
        timing.reason
        == f"the account '{user}'@'127.0.0.1' may not read performance_schema (error 1142)"
    )
    assert timing.fix == f"GRANT SELECT ON performance_schema.* TO '{user}'@'127.0.0.1'"
    assert "Innodb_data_fsyncs" in counters
    assert not any(name.startswith("pfs_") for name in counters)

    mariadb_ps_server.execute(timing.fix)  # the statement it gives is the one that works
    with mariadb(mariadb_ps_server, ps_database, user, password) as db:
        assert db.fsync_timing() == FsyncTiming(True)
        assert "pfs_binlog_syncs" in db.status_counters()


def test_postgres_names_track_wal_io_timing_and_the_alter_system(postgres_server):
    connection = Connection(
        engine="postgresql", host=postgres_server.host, port=postgres_server.port, socket="",
        database="postgres", user=postgres_server.user, password="",
    )  # fmt: skip
    with targets.connect(connection) as db:
        off = db.fsync_timing()
    try:
        with postgres_server.connect() as admin:
            for statement in off.fix.split("; "):
                admin.execute(statement.rstrip(";"))
        with targets.connect(connection) as db:
            on = db.fsync_timing()
    finally:
        with postgres_server.connect() as admin:
            admin.execute("ALTER SYSTEM RESET track_wal_io_timing")
            admin.execute("SELECT pg_reload_conf()")

    assert off == FsyncTiming(
        False,
        "track_wal_io_timing is off",
        "ALTER SYSTEM SET track_wal_io_timing = on; SELECT pg_reload_conf();",
    )
    assert on == FsyncTiming(True)
