"""The private servers of tests/servers.py answer, with the settings the suite relies on."""

from __future__ import annotations

import MySQLdb
import pytest

from tests.servers import PrivateMariaDB, PrivatePostgres


def scalar(db, sql: str, *params):
    cursor = db.cursor()
    cursor.execute(sql, params or None)
    row = cursor.fetchone()
    return row[0]


def test_private_mariadb_has_binary_logging_on(mariadb_server: PrivateMariaDB):
    db = mariadb_server.root_connect()
    try:
        assert scalar(db, "SELECT @@log_bin") == 1
        assert scalar(db, "SELECT @@max_connections") == mariadb_server.max_connections == 20
    finally:
        db.close()


def test_bench_user_connects_over_tcp_and_may_set_durability_settings(
    mariadb_server: PrivateMariaDB, mariadb_db: str
):
    db = mariadb_server.connect(mariadb_db)
    try:
        flush = scalar(db, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")
        sync = scalar(db, "SELECT @@GLOBAL.sync_binlog")
        cursor = db.cursor()
        cursor.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        cursor.execute("SET GLOBAL sync_binlog = 1")
        assert scalar(db, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit") == 2
        assert scalar(db, "SELECT @@GLOBAL.sync_binlog") == 1
        cursor.execute(f"SET GLOBAL innodb_flush_log_at_trx_commit = {int(flush)}")
        cursor.execute(f"SET GLOBAL sync_binlog = {int(sync)}")
        cursor.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        assert scalar(db, "SELECT DATABASE()") == mariadb_db
    finally:
        db.close()


def test_each_mariadb_db_is_fresh_and_dropped_afterwards(
    mariadb_server: PrivateMariaDB, mariadb_db: str
):
    db = mariadb_server.root_connect(mariadb_db)
    try:
        assert (
            scalar(
                db,
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = %s",
                mariadb_db,
            )
            == 0
        )
    finally:
        db.close()
    mariadb_server.drop_database(mariadb_db)
    with pytest.raises(MySQLdb.OperationalError):
        mariadb_server.root_connect(mariadb_db)


def test_wrong_password_is_refused(mariadb_server: PrivateMariaDB):
    with pytest.raises(MySQLdb.OperationalError) as refused:
        MySQLdb.connect(
            host=mariadb_server.host, port=mariadb_server.port, user="bench", password="nope"
        )
    assert refused.value.args[0] == 1045


def test_private_postgres_answers(postgres_server: PrivatePostgres):
    with postgres_server.connect() as db:
        version = db.execute("SHOW server_version").fetchone()
        assert version is not None
        assert int(version[0].split(".")[0]) >= 13
        assert db.execute("SELECT current_user").fetchone() == ("postgres",)
