"""The server's own accounting around a run, live: MariaDB's performance_schema wait
summaries move with sync_binlog and its digests count sysbench's statements; PostgreSQL
without pg_stat_statements says how to install it and still profiles its waits, and with
it counts sysbench's statements. Each through the counter sampler a run uses."""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from runs import targets
from runs.analysis.why import inside
from runs.sysbench.command import Connection
from runs.targets.counters import CounterSampler, counters_summary
from runs.targets.inside import WaitSampler
from tests.servers import PrivatePostgres

pytestmark = pytest.mark.timeout(300)
TRANSACTIONS = re.compile(r"transactions:\s+(\d+)")


def _sampled(connection: Connection, sysbench: list[str], *, pg: bool = False) -> dict[str, Any]:
    """One sysbench run with the run's samplers around it; its counters["inside"]."""
    sampler = CounterSampler(run_id=0, connection=connection, interval_s=1.0, engine="x")
    if pg:
        sampler.waits = WaitSampler(
            run_id=0, connect=lambda: targets.connect(connection), interval_s=0.1
        ).start()
    sampler.start()
    done = subprocess.run([*sysbench, "run"], check=True, capture_output=True, timeout=120)
    sampler.stop()
    if sampler.waits is not None:
        sampler.inside["waits"] = sampler.waits.stop()
    # sysbench's count, as a run's is: PostgreSQL's own counters lag up to a second
    transactions = float(TRANSACTIONS.search(done.stdout.decode()).group(1))  # type: ignore[union-attr]
    counters = counters_summary(sampler.readings, [{"sql": {"transactions": transactions}}])
    return inside.inside_summary(
        sampler.inside, transactions=transactions, duration_s=counters.get("duration_s", 0)
    )


def _binlog_ms(summary: dict[str, Any]) -> float:
    return sum(
        w["ms_per_tx"] for w in summary["waits"] if w["event"].startswith("wait/io/file/sql/binlog")
    )


def test_the_binary_logs_wait_moves_with_sync_binlog_and_digests_count_the_inserts(
    mariadb_ps_server,
):
    server = mariadb_ps_server
    database = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    connection = Connection(
        engine="mariadb", host=server.host, port=server.port, socket="", database=database,
        user=server.user, password=server.password,
    )  # fmt: skip
    sysbench = [
        "sysbench", "oltp_insert", "--db-driver=mysql", "--mysql-host=127.0.0.1",
        f"--mysql-port={server.port}", "--mysql-user=bench",
        f"--mysql-password={server.password}", f"--mysql-db={database}", "--tables=1",
        "--table-size=100", "--threads=1", "--time=3", "--rate=150",
    ]  # fmt: skip
    subprocess.run([*sysbench, "prepare"], check=True, capture_output=True, timeout=60)
    runs = {}
    with targets.connect(connection) as db:
        for sync in ("0", "1"):
            db.apply({"innodb_flush_log_at_trx_commit": "1", "sync_binlog": sync})
            runs[sync] = _sampled(connection, sysbench)

    off, on = runs["0"], runs["1"]
    assert off["readable"]["readable"] and off["waits_source"] == "performance_schema"
    # each commit syncs the binary log under sync_binlog=1: its wait grows per transaction
    assert _binlog_ms(on) > _binlog_ms(off) + 0.01, (off["waits"], on["waits"])
    sentence = inside.moved("sync_binlog=1", inside.cell_waits([off]), inside.cell_waits([on]))
    assert "binary log file I/O" in sentence and "+" in sentence, sentence
    insert = next(d for d in on["digests"] if d["text"].upper().startswith("INSERT"))
    assert insert["calls"] == pytest.approx(on["transactions"], rel=0.05)
    assert insert["mean_ms"] > 0 and insert["total_ms"] >= insert["mean_ms"]
    assert "rows_examined_per_call" in insert
    assert not any("performance_schema" in d["text"].lower() for d in on["digests"])


@pytest.fixture
def own_postgres() -> Iterator[PrivatePostgres]:
    """A PostgreSQL of this test's own: it is restarted with a preloaded library."""
    server = PrivatePostgres()
    try:
        yield server.start()
    finally:
        server.stop()


def test_postgres_without_then_with_pg_stat_statements(own_postgres):
    server = own_postgres
    with server.connect() as admin:
        admin.execute("CREATE DATABASE sb")
    connection = Connection(
        engine="postgresql", host=server.host, port=server.port, socket="", database="sb",
        user=server.user, password="",
    )  # fmt: skip
    sysbench = [
        "sysbench", "oltp_insert", "--db-driver=pgsql", "--pgsql-host=127.0.0.1",
        f"--pgsql-port={server.port}", "--pgsql-user=postgres", "--pgsql-db=sb",
        "--tables=1", "--table-size=100", "--threads=2", "--time=4", "--rate=400",
    ]  # fmt: skip
    subprocess.run([*sysbench, "prepare"], check=True, capture_output=True, timeout=60)

    without = _sampled(connection, sysbench, pg=True)

    readable = without["readable"]
    assert not readable["readable"] and "pg_stat_statements" in readable["reason"]
    assert "shared_preload_libraries" in readable["fix"]
    assert "CREATE EXTENSION pg_stat_statements" in readable["fix"]
    assert "digests" not in without
    # the waits in progress were still sampled, each active backend once per look
    profile = without["sampled"]
    assert profile["samples"] >= 20 and profile["error"] == ""
    assert sum(profile["waits"].values()) > 0
    assert without["waits_source"].startswith("sampled every")
    assert all(w["ms_per_tx"] is not None and w["ms_per_tx"] >= 0 for w in without["waits"])

    with server.connect() as admin:  # the statements the fix gives, as a user would run them
        admin.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
    server.stop_server()
    server.start_again()
    with server.connect("sb") as admin:
        admin.execute("CREATE EXTENSION pg_stat_statements")

    with_statements = _sampled(connection, sysbench, pg=True)

    assert with_statements["readable"]["readable"]
    insert = next(d for d in with_statements["digests"] if d["text"].upper().startswith("INSERT"))
    assert insert["calls"] == pytest.approx(with_statements["transactions"], rel=0.05)
    assert insert["mean_ms"] > 0 and "blocks_per_call" in insert
    assert insert["rows_sent_per_call"] == pytest.approx(1.0)
    assert not any("pg_stat" in d["text"].lower() for d in with_statements["digests"])
