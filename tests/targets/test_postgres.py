"""PostgreSQL targets on the private PostgreSQL (never the results store): settings applied
with ALTER SYSTEM, verified in pg_settings, restored as postgresql.auto.conf was, also by
the sweeper after a crash; and a matrix batch end to end with sysbench's pgsql driver."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs import targets
from runs.errors import InvalidInput
from runs.execution import environment
from runs.execution.preflight import limits
from runs.models import Batch, CounterSample, Status, Target
from runs.services import batches
from runs.services import plans as checks
from runs.targets.counters import CounterSampler, settled_counters
from tests.helpers import wait_for_batch, wait_until
from tests.servers import PrivatePostgres

pytestmark = pytest.mark.timeout(400)


@pytest.fixture
def pg_database(postgres_server) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    with postgres_server.connect() as db:
        db.execute(f'CREATE DATABASE "{name}"')
    yield name
    with postgres_server.connect() as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_target(postgres_server, pg_database) -> Target:
    return Target(
        name="private-postgres",
        engine="postgresql",
        host=postgres_server.host,
        port=postgres_server.port,
        database=pg_database,
        user=postgres_server.user,
        password="",
    )


@pytest.fixture
def clean_auto_conf(postgres_server) -> Iterator[None]:
    """Every test leaves postgresql.auto.conf as it found it: empty."""
    yield
    with postgres_server.connect() as db:
        db.execute("ALTER SYSTEM RESET ALL")
        db.execute("SELECT pg_reload_conf()")


def auto_conf(postgres_server) -> dict[str, str]:
    with postgres_server.connect() as db:
        rows = db.execute(
            "SELECT name, setting FROM pg_file_settings "
            "WHERE sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno"
        ).fetchall()
    return {name: setting for name, setting in rows}


def show(postgres_server, name: str) -> str:
    with postgres_server.connect() as db:
        return str(db.execute(f"SHOW {name}").fetchone()[0])  # names are constants here


def test_settings_are_applied_verified_in_pg_settings_and_reset(
    postgres_server, pg_target, clean_auto_conf
):
    with targets.connect(targets.connection_of(pg_target)) as db:
        originals = db.originals(["synchronous_commit", "checkpoint_timeout"])
        before = db.server_info().variables
        applied = db.apply({"synchronous_commit": "off", "checkpoint_timeout": "15min"})
        verified = applied.verified
        changed = auto_conf(postgres_server)
        db.restore(originals)

    assert originals == {
        "synchronous_commit": {"value": "on", "auto_conf": None},
        "checkpoint_timeout": {"value": "300s", "auto_conf": None},
    }
    assert verified == {"synchronous_commit": "off", "checkpoint_timeout": "900s"}
    # Read back with the verification, every setting as the batch's snapshot has it: what
    # differs is what the run changed.
    assert {n: v for n, v in applied.variables.items() if before.get(n) != v} == {
        "synchronous_commit": "off",
        "checkpoint_timeout": "15min",
    }
    assert changed == {"synchronous_commit": "off", "checkpoint_timeout": "900s"}
    # RESET, not SET back: nothing of benchdash stays in postgresql.auto.conf
    assert auto_conf(postgres_server) == {}
    assert show(postgres_server, "synchronous_commit") == "on"


def test_a_value_that_was_in_postgresql_auto_conf_is_put_back(
    postgres_server, pg_target, clean_auto_conf
):
    with postgres_server.connect() as admin:
        admin.execute("ALTER SYSTEM SET max_wal_size = '2GB'")
        admin.execute("SELECT pg_reload_conf()")
    with targets.connect(targets.connection_of(pg_target)) as db:
        originals = db.originals(["max_wal_size"])
        assert db.apply({"max_wal_size": "512MB"}).verified == {"max_wal_size": "512MB"}
        db.restore(originals)

    assert originals == {"max_wal_size": {"value": "2048MB", "auto_conf": "2GB"}}
    assert auto_conf(postgres_server) == {"max_wal_size": "2GB"}


def test_a_role_that_is_not_superuser_is_refused_with_a_clear_message(
    postgres_server, pg_target, clean_auto_conf
):
    role = f"weak_{uuid.uuid4().hex[:8]}"
    with postgres_server.connect() as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
    try:
        weak = Target(**{**_fields(pg_target), "user": role})
        with targets.connect(targets.connection_of(weak)) as db:
            with pytest.raises(targets.SettingNotApplied) as refused:
                db.apply({"synchronous_commit": "off"})
            info = db.server_info()
    finally:
        with postgres_server.connect() as admin:
            admin.execute(f"DROP ROLE {role}")

    assert "is not a superuser" in refused.value.message
    assert "GRANT ALTER SYSTEM ON PARAMETER synchronous_commit" in refused.value.hint
    assert auto_conf(postgres_server) == {}
    # at launch: a warning (PostgreSQL 15 can grant the privilege), and the reserved
    # connections are not the role's to use
    warnings = limits.server_warnings(info, {"synchronous_commit": ["off"]}, 2)
    assert "not a superuser" in warnings[0]
    assert info.max_connections == 97


def test_the_sweeper_restores_the_settings_of_a_batch_whose_worker_died(
    postgres_server, pg_target, clean_auto_conf, transactional_db, local_host
):
    pg_target.save()
    with targets.connect(targets.connection_of(pg_target)) as db:
        originals = db.originals(["synchronous_commit"])
        db.apply({"synchronous_commit": "off"})
    batch = Batch.objects.create(
        target=pg_target,
        load_host=local_host,
        params={"test": "oltp_read_write"},
        seed=0,
        launched_by="api",
        original_settings=originals,
    )

    environment.batch_restore_settings(batch=batch)

    assert show(postgres_server, "synchronous_commit") == "on"
    assert auto_conf(postgres_server) == {}
    assert batch.settings_restored_at is not None


def test_a_plan_may_not_change_the_results_store_server(local_host):
    from django.conf import settings

    store = settings.DATABASES["default"]
    target = Target.objects.create(
        name="the-store",
        engine="postgresql",
        host=str(store["HOST"]),
        port=int(str(store["PORT"])),
        database="sbtest",
        user="postgres",
    )
    plan = _plan(target, local_host, server_settings={"synchronous_commit": ["off"]})

    with pytest.raises(InvalidInput, match="holds benchdash's own results"):
        checks.plan_check(plan=plan, contact_server=False)


@pytest.mark.slow
def test_a_postgresql_matrix_runs_with_settings_verified_and_restored(
    celery_worker, postgres_server, pg_target, local_host, clean_auto_conf
):
    pg_target.save()
    plan = _plan(
        pg_target,
        local_host,
        test="oltp_read_write",
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 100},
        threads=[1, 2],
        server_settings={"synchronous_commit": ["on", "off"]},
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("status", "error")))
    runs = list(batch.runs.order_by("position"))
    assert sorted((r.threads, r.settings["synchronous_commit"]) for r in runs) == [
        (1, "off"),
        (1, "on"),
        (2, "off"),
        (2, "on"),
    ]
    for run in runs:
        assert run.status == Status.DONE, run.error
        assert run.verified_settings == run.settings
        assert run.summary["transactions"] > 0
        assert run.samples.count() >= 1
        assert "--db-driver" not in " ".join(run.argv)  # the driver is in the config file
        assert run.counters["deltas"]["db_xact_commit"] > 0
        assert CounterSample.objects.filter(run=run).count() >= 2
    assert batch.original_settings == {"synchronous_commit": {"value": "on", "auto_conf": None}}
    assert batch.settings_restored_at is not None
    assert show(postgres_server, "synchronous_commit") == "on"
    assert auto_conf(postgres_server) == {}
    server = batch.environment["server"]
    assert server["version"].startswith(show(postgres_server, "server_version").split()[0])
    assert server["pg_settings"]["synchronous_commit"]["setting"] == "on"
    assert [s["kind"] for s in batch.stages] == ["prepare", "cleanup"]


def _fields(target: Target) -> dict:
    return {
        f: getattr(target, f)
        for f in ("name", "engine", "host", "port", "database", "user", "password")
    }


def _plan(target: Target, load_host, **fields):
    from runs.models import Plan

    values = {
        "name": f"pg plan {uuid.uuid4().hex[:6]}",
        "target": target,
        "load_host": load_host,
        "test": "oltp_read_write",
        "options": {"time": 2, "tables": 1, "table-size": 100},
        "threads": [1],
    }
    values.update(fields)
    return Plan.objects.create(**values)


def test_the_data_set_marker_and_row_counts_on_postgresql(postgres_server, pg_target):
    with postgres_server.connect(pg_target.database) as admin:
        admin.execute("CREATE TABLE sbtest1 (id integer PRIMARY KEY)")
        admin.execute("INSERT INTO sbtest1 SELECT generate_series(1, 42)")
    marker = {
        "family": "oltp",
        "tables_count": 1,
        "table_size": 42,
        "sysbench_version": "sysbench 1.0.20",
        "dataset_key": "oltp tables=1 table-size=42",
        "batch_id": 7,
        "prepared_at": "2024-01-01T00:00:00+00:00",
    }
    with targets.connect(targets.connection_of(pg_target)) as db:
        assert db.dataset_marker() is None
        db.dataset_mark(marker)
        db.dataset_mark(marker)  # a second prepare replaces the row
        stored = db.dataset_marker()
        tables = db.sbtest_tables()
        counts = db.row_counts(tables)
        db.dataset_forget()
        forgotten = db.dataset_marker()

    assert stored == marker
    assert tables == ["sbtest1"]  # not the marker table
    assert counts == {"sbtest1": 42}
    assert forgotten is None


@pytest.fixture
def collecting_postgres() -> Iterator[PrivatePostgres]:
    """A PostgreSQL of the test's own whose logging collector writes its log files."""
    server = PrivatePostgres()
    try:
        server.start()
        with (server.datadir / "postgresql.conf").open("a") as conf:
            conf.write("logging_collector = on\nlog_directory = 'log'\n")
        server.stop_server()
        server.start_again()
        yield server
    finally:
        server.stop()


def test_the_server_says_where_its_logging_collector_writes(
    collecting_postgres, pg_target, postgres_server
):
    with targets.connect(targets.connection_of(pg_target)) as db:
        assert db.restart_facts([]).error_log == ""  # no collector: its stderr, unnamed
    pg_target.port, pg_target.database = collecting_postgres.port, "postgres"
    with targets.connect(targets.connection_of(pg_target)) as db:
        log = db.restart_facts([]).error_log

    assert log.startswith(f"{collecting_postgres.datadir}/log/postgresql-"), log
    assert Path(log).is_file()


def test_the_closing_reading_counts_a_session_that_just_ended(postgres_server, pg_target):
    """PostgreSQL adds a session's commits to pg_stat_database once a second and when the
    session ends: the closing reading waits for that, so none of them is missing."""
    with targets.connect(targets.connection_of(pg_target)) as db:
        before = db.status_counters()
        client = postgres_server.connect(pg_target.database)
        client.autocommit = True
        for _ in range(50):
            client.execute("SELECT 1")  # a transaction each
        opened = db.status_counters()["backends_total"]
        client.close()
        after = settled_counters(db, [(0.0, before)])

    assert opened == before["backends_total"] + 1
    assert after["backends_total"] == before["backends_total"]
    # the ended session's 50, none left for later
    assert after["db_xact_commit"] - before["db_xact_commit"] >= 50


def test_the_sampler_thread_reads_when_nudged_and_on_its_own_when_no_line_comes(pg_target):
    """PostgreSQL's reading is several statements, read by the sampler's own thread: a line that
    wakes the worker nudges it (a nudge sooner than half an interval after a reading
    waits), and without one it reads a quarter of an interval late, on its own."""
    sampler = CounterSampler(
        run_id=0, connection=targets.connection_of(pg_target), interval_s=2.0
    ).start()
    wait_until(lambda: len(sampler.readings) == 1, 30, "the first reading")  # at start

    sampler.awake(line=True)  # too soon: nothing
    time.sleep(1.2)
    assert len(sampler.readings) == 1
    assert sampler.due_at() is None  # the thread reads: the worker never wakes for it
    sampler.awake(line=True)
    wait_until(lambda: len(sampler.readings) == 2, 1, "the nudged reading")
    wait_until(lambda: len(sampler.readings) == 3, 10, "a reading of its own")  # no line
    readings = sampler.stop()

    times = [t for t, _ in readings]
    assert len(times) == 4  # and the closing one
    assert 1.2 <= times[1] - times[0] < 2.5  # the nudge, before it was due on its own
    assert times[2] - times[1] >= 2.5  # a quarter of an interval late
    assert sampler.error == ""
    assert all("db_xact_commit" in values for _, values in readings)


def test_a_credential_the_server_shows_is_kept_hidden_with_the_batch(
    postgres_server, pg_target, clean_auto_conf
):
    secret = "Hunter2-pg"
    with postgres_server.connect() as db:  # a standby's conninfo, as a superuser reads it
        db.execute(f"ALTER SYSTEM SET primary_conninfo = 'host=10.0.0.9 password={secret}'")
        db.execute("SELECT pg_reload_conf()")
    wait_until(lambda: secret in show(postgres_server, "primary_conninfo"), 30, "the reload")

    with targets.connect(targets.connection_of(pg_target)) as db:
        info = db.server_info()

    assert info.variables["primary_conninfo"] == "********"
    assert info.details["pg_settings"]["primary_conninfo"]["setting"] == "********"
    assert secret not in repr(info)
    # settings whose names only look like a credential's are kept as they are
    assert info.variables["password_encryption"] == "scram-sha-256"
    assert info.variables["shared_buffers"] == show(postgres_server, "shared_buffers")
