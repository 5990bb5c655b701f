"""benchdash's own PostgreSQL restarts during a run: nothing lost, nothing doubled.

A private PostgreSQL holds benchdash's tables; a real worker process is pointed at it
(BENCHDASH_DB_HOST/PORT/NAME) and the test reads what it stored there directly."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.helpers import global_variable, wait_until
from tests.processes import ROOT, WorkerProcess
from tests.servers import PrivateMariaDB, PrivatePostgres

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

FLUSH = "innodb_flush_log_at_trx_commit"
LAUNCH = """
import json, sys
import django
django.setup()
from runs.models import LoadHost, Plan, Target
from runs.services import batches
port, database, password, options = sys.argv[1:5]
target = Target.objects.create(
    name="outage", engine="mariadb", host="127.0.0.1", port=int(port), database=database,
    user="bench", password=password,
)
local, _ = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})
plan = Plan.objects.create(
    name="outage", target=target, load_host=local, test="oltp_read_only",
    options=json.loads(options), threads=[1],
    server_settings={"innodb_flush_log_at_trx_commit": ["0"]},
)
print(batches.batch_launch(plan=plan, launched_by="cli").pk)
"""


class ResultsDB:
    """The private results database, read directly (SQL), tolerant of its absence."""

    def __init__(self, server: PrivatePostgres, env: dict[str, str]) -> None:
        self.server = server
        self.env = env

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with self.server.connect(self.env["BENCHDASH_DB_NAME"]) as db:
            return db.execute(sql, params).fetchall()

    def value(self, sql: str, *params: Any) -> Any:
        try:
            rows = self.rows(sql, *params)
        except psycopg.OperationalError:
            return None
        return rows[0][0] if rows else None

    def launch(self, mariadb: PrivateMariaDB, database: str, options: dict[str, Any]) -> int:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                LAUNCH,
                str(mariadb.port),
                database,
                mariadb.password,
                json.dumps(options),
            ],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return int(done.stdout.split()[-1])

    def samples_stored(self, batch_id: int) -> int:
        count = self.value(
            "SELECT count(*) FROM runs_sample s JOIN runs_run r ON r.id = s.run_id "
            "WHERE r.batch_id = %s",
            batch_id,
        )
        return int(count or 0)

    def wait_finished(self, batch_id: int, timeout: float) -> None:
        wait_until(
            lambda: (
                self.value("SELECT finished_at FROM runs_batch WHERE id = %s", batch_id) is not None
            ),
            timeout=timeout,
            what=f"batch {batch_id} to finish",
        )


@pytest.fixture
def results_db(tmp_path: Path) -> Iterator[ResultsDB]:
    server = PrivatePostgres()
    try:
        server.start()
        yield ResultsDB(server, server.benchdash_env("benchdash_outage"))
    finally:
        server.stop()


def interval_lines(raw_log: str) -> list[str]:
    return [line for line in raw_log.splitlines() if line.startswith("[") and "thds:" in line]


def test_a_results_database_restart_mid_run_loses_and_doubles_no_sample(
    results_db, mariadb_server, mariadb_db, tmp_path
):
    options = {"time": 16, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10}
    worker = WorkerProcess(tmp_path / "worker.log", env=results_db.env)
    try:
        batch_id = results_db.launch(mariadb_server, mariadb_db, options)
        wait_until(lambda: results_db.samples_stored(batch_id) >= 3, timeout=90, what="samples")

        results_db.server.stop_server()  # pg_ctl stop -m fast
        time.sleep(5)
        results_db.server.start_again()
        results_db.wait_finished(batch_id, timeout=120)
    finally:
        worker.stop()

    ((status, run_status, warnings, raw_log, run_id),) = results_db.rows(
        "SELECT b.status, r.status, r.warnings, r.raw_log, r.id "
        "FROM runs_batch b JOIN runs_run r ON r.batch_id = b.id WHERE b.id = %s",
        batch_id,
    )
    assert (status, run_status) == ("done", "done")
    assert any("results database was unreachable" in w for w in warnings), warnings
    seqs = [
        s
        for (s,) in results_db.rows(
            "SELECT seq FROM runs_sample WHERE run_id = %s ORDER BY seq", run_id
        )
    ]
    lines = interval_lines(raw_log)
    assert len(lines) >= 15
    assert seqs == list(range(1, len(lines) + 1))  # every line a sample, none twice
    assert len(set(lines)) == len(lines)  # the raw log holds each line once
    counters = results_db.rows("SELECT seq FROM runs_countersample WHERE run_id = %s", run_id)
    assert sorted(s for (s,) in counters) == list(range(1, len(counters) + 1))


def test_a_results_database_away_too_long_stops_the_run_and_restores_at_once(
    results_db, mariadb_server, mariadb_db, tmp_path
):
    original = global_variable(mariadb_server, FLUSH)
    options = {"time": 40, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10}
    env = {**results_db.env, "BENCHDASH_RESULTS_DB_OUTAGE_S": "3"}
    worker = WorkerProcess(tmp_path / "worker.log", env=env)
    try:
        batch_id = results_db.launch(mariadb_server, mariadb_db, options)
        wait_until(lambda: results_db.samples_stored(batch_id) >= 3, timeout=90, what="samples")
        assert global_variable(mariadb_server, FLUSH) == "0"
        stored = results_db.samples_stored(batch_id)

        results_db.server.stop_server()
        # Settings go back while the results database is still away.
        wait_until(
            lambda: global_variable(mariadb_server, FLUSH) == original,
            timeout=20,
            what="the settings restored",
        )
        results_db.server.start_again()
        results_db.wait_finished(batch_id, timeout=60)
    finally:
        worker.stop()

    ((status, error, run_status, run_error, kind, run_id),) = results_db.rows(
        "SELECT b.status, b.error, r.status, r.error, r.error_kind, r.id "
        "FROM runs_batch b JOIN runs_run r ON r.batch_id = b.id WHERE b.id = %s",
        batch_id,
    )
    assert (status, run_status, kind) == ("failed", "failed", "results_db")
    assert "results database was unreachable for more than 3 s" in run_error
    assert "settings restored" in run_error
    assert "results database" in error
    seqs = [
        s
        for (s,) in results_db.rows(
            "SELECT seq FROM runs_sample WHERE run_id = %s ORDER BY seq", run_id
        )
    ]
    assert len(seqs) >= stored and seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) < 30  # stopped well before its 40 s


def test_a_long_outage_is_told_with_its_real_length(
    results_db, mariadb_server, mariadb_db, tmp_path
):
    options = {"time": 40, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10}
    # The default heartbeat (5 s): the worker's writes are that far apart.
    env = {
        **results_db.env,
        "BENCHDASH_RESULTS_DB_OUTAGE_S": "3",
        "BENCHDASH_HEARTBEAT_SECONDS": "5",
    }
    worker = WorkerProcess(tmp_path / "worker.log", env=env)
    try:
        batch_id = results_db.launch(mariadb_server, mariadb_db, options)
        wait_until(lambda: results_db.samples_stored(batch_id) >= 3, timeout=90, what="samples")
        # Stopped just after a heartbeat's write: the worker's next write, which finds
        # the database gone, comes seconds later (what the worker saw, not the outage).
        stored = results_db.samples_stored(batch_id)
        wait_until(lambda: results_db.samples_stored(batch_id) > stored, timeout=30, what="a write")
        stopped_at = datetime.now(UTC).replace(microsecond=0)
        results_db.server.stop_server()
        # Beyond the limit (3 s), within the final wait (3 x 3 s), both counted from the
        # first failed write, a heartbeat after the stop.
        time.sleep(10)
        results_db.server.start_again()
        started_again_at = datetime.now(UTC).replace(microsecond=0)
        results_db.wait_finished(batch_id, timeout=60)
    finally:
        worker.stop()

    ((warnings, run_error),) = results_db.rows(
        "SELECT r.warnings, r.error FROM runs_run r WHERE r.batch_id = %s", batch_id
    )
    assert "results database was unreachable for more than 3 s" in run_error
    (outage,) = [w for w in warnings if w.startswith("the results database was unreachable")]
    seconds = int(outage.split("UTC (")[1].split(" s")[0])
    print(f"\nan outage of about 10 s is told as {seconds} s: {outage}")
    assert seconds >= 9, outage
    # The outage's interval, not the worker's detection: it holds the real one.
    told_from, told_to = outage.split(" UTC (")[0].split("unreachable from ")[1].split(" to ")
    assert told_from <= f"{stopped_at:%H:%M:%S}", (stopped_at, outage)
    assert told_to >= f"{started_again_at:%H:%M:%S}", (started_again_at, outage)


SWEEP = """
import django
django.setup()
from runs.services import recovery
print(recovery.batches_sweep_stale(hostname="elsewhere"))
"""


def test_an_outage_beyond_the_final_wait_keeps_the_run_and_is_told_with_its_length(
    results_db, mariadb_server, mariadb_db, tmp_path
):
    """Away longer than the worker waits: the worker gives up, yet nothing it held is lost
    (sysbench ended meanwhile: its last lines and final report too), and the batch's ending
    names the outage with its real length, not a worker that stopped beating."""
    options = {"time": 7, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10}
    env = {**results_db.env, "BENCHDASH_RESULTS_DB_OUTAGE_S": "6"}
    log = tmp_path / "worker.log"
    worker = WorkerProcess(log, env=env)
    try:
        batch_id = results_db.launch(mariadb_server, mariadb_db, options)
        wait_until(lambda: results_db.samples_stored(batch_id) >= 3, timeout=90, what="samples")
        results_db.server.stop_server()
        down = time.monotonic()
        wait_until(lambda: "given up" in log.read_text(), timeout=60, what="the worker to give up")
        time.sleep(2)  # still away a while after the worker gave up
        results_db.server.start_again()
        away_s = time.monotonic() - down
        # The sweeper, as the beat runs it, once the database is back.
        sweep_env = {**results_db.env, "BENCHDASH_STALE_AFTER_SECONDS": "1"}
        subprocess.run(
            [sys.executable, "-c", SWEEP], cwd=ROOT, env=sweep_env, check=True, timeout=60
        )
        results_db.wait_finished(batch_id, timeout=30)
    finally:
        worker.stop()

    ((status, error, run_status, run_error, warnings, raw_log, reports, run_id),) = results_db.rows(
        "SELECT b.status, b.error, r.status, r.error, r.warnings, r.raw_log, "
        "r.reports, r.id FROM runs_batch b JOIN runs_run r ON r.batch_id = b.id "
        "WHERE b.id = %s",
        batch_id,
    )
    print(f"\nthe batch's ending: {error}\nthe run's end: {run_error}\n{raw_log[-400:]}")
    assert (status, run_status, run_error) == ("failed", "done", "")
    assert "results database was unreachable" in error
    told_s = int(error.split("UTC (")[1].split(" s")[0])
    print(f"an outage of {away_s:.1f} s is told as {told_s} s")
    assert told_s >= int(away_s) - 1
    seqs = [
        s
        for (s,) in results_db.rows(
            "SELECT seq FROM runs_sample WHERE run_id = %s ORDER BY seq", run_id
        )
    ]
    lines = interval_lines(raw_log)
    assert seqs == list(range(1, len(lines) + 1))  # every line of the raw log a sample
    assert len(lines) >= 5
    assert "SQL statistics:" in raw_log  # sysbench's final report
    assert reports
    assert any(w.startswith("the results database was unreachable") for w in warnings)
