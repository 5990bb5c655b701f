"""A plan over two private MariaDB servers: its cells interleaved across both, round by
round; each server's settings applied, read back and restored; the data set prepared and
dropped on each; the results with a verdict of the second server against the first."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from runs.models import PlanServer, Status, Target
from runs.services import batches
from runs.services.answers.results import batch_results
from tests.helpers import global_variable, wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

FLUSH = "innodb_flush_log_at_trx_commit"


def global_status(server, name: str) -> int:
    db = server.root_connect()
    try:
        cursor = db.cursor()
        cursor.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
        return int(cursor.fetchone()[1])
    finally:
        db.close()


def sbtest_tables(server, database: str) -> list[str]:
    db = server.root_connect()
    try:
        cursor = db.cursor()
        cursor.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
            "AND table_name LIKE 'sbtest%%'",
            (database,),
        )
        return [row[0] for row in cursor.fetchall()]
    finally:
        db.close()


@pytest.fixture
def second_db(mariadb_nobinlog_server) -> Iterator[str]:
    name = mariadb_nobinlog_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    yield name
    mariadb_nobinlog_server.drop_database(name)


@pytest.fixture
def second_target(transactional_db, mariadb_nobinlog_server, second_db: str) -> Target:
    server = mariadb_nobinlog_server
    return Target.objects.create(
        name="second-mariadb",
        engine="mariadb",
        host="127.0.0.1",
        port=server.port,
        database=second_db,
        user=server.user,
        password=server.password,
    )


def test_a_plan_over_two_servers_runs_interleaved_and_restores_both(
    celery_worker, make_plan, target, second_target, mariadb_server, mariadb_nobinlog_server
):
    servers = {target.pk: mariadb_server, second_target.pk: mariadb_nobinlog_server}
    originals = {pk: global_variable(s, FLUSH) for pk, s in servers.items()}
    inserts = {pk: global_status(s, "Com_insert") for pk, s in servers.items()}
    plan = make_plan(
        test="oltp_insert",
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 100},
        threads=[1, 2],
        server_settings={FLUSH: ["2"]},
        repeats=3,  # the fewest a verdict with an interval takes
    )
    PlanServer.objects.create(plan=plan, target=second_target, position=1)

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("status", "error")))
    runs = list(batch.runs.order_by("position"))
    assert len(runs) == 12
    # Interleaved: every round measures both servers, so drift hits both alike.
    for round_ in (0, 1, 2):
        assert {r.target_id for r in runs if r.round == round_} == set(servers)
    for run in runs:
        assert run.status == Status.DONE, run.error
        assert run.verified_settings == {FLUSH: "2"}
        assert run.target is not None
        assert run.environment["target"]["name"] == run.target.name
        assert run.summary["transactions"] > 0
    # Each run went to its own server: both counted the inserts of their own runs.
    for pk, server in servers.items():
        done = sum(r.summary["transactions"] for r in runs if r.target_id == pk)
        assert global_status(server, "Com_insert") - inserts[pk] >= done
    # The settings: applied and read back on both, put back on both.
    assert batch.original_settings == {FLUSH: originals[target.pk]}
    further = batch.put_back[str(second_target.pk)]
    assert further["original_settings"] == {FLUSH: originals[second_target.pk]}
    assert further["settings_restored_at"]
    assert batch.settings_restored_at is not None
    for pk, server in servers.items():
        assert global_variable(server, FLUSH) == originals[pk]
    # The data set: prepared on each, dropped from each.
    stages = [(s["kind"], s["target"]) for s in batch.stages]
    assert sorted(stages) == sorted((kind, pk) for kind in ("prepare", "cleanup") for pk in servers)
    assert sbtest_tables(mariadb_server, target.database) == []
    assert sbtest_tables(mariadb_nobinlog_server, second_target.database) == []
    # The environment and the preflight name both servers.
    assert batch.environment["targets"][str(second_target.pk)]["version"]
    checked = {c["host"] for c in batch.environment["preflight"]["checks"]}
    assert {target.name, second_target.name} <= checked

    # The results: the target as an axis, named, the first server the baseline.
    found = batch_results(batch=batch)
    labels = [s["label"] for s in found.series]
    assert labels == [f"target={target.name}", f"target={second_target.name}"]
    assert found.baseline_label == f"target={target.name}"
    assert [(v["series"], v["threads"]) for v in found.verdicts] == [
        (f"target={second_target.name}", 1),
        (f"target={second_target.name}", 2),
    ]
    for verdict in found.verdicts:
        assert verdict["n_base"] == verdict["n_other"] == 3
        assert verdict["interval"], verdict
        assert verdict["correction"] == "Holm's correction over 2 cells"
    peaks = {s["label"]: s["peak"] for s in found.series}
    assert all(peak is not None for peak in peaks.values()), peaks
