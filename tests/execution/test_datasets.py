"""Reusable data sets: a later batch with the same shape skips prepare; a changed shape or
a damaged set is prepared again."""

from __future__ import annotations

import pytest

from runs.models import Status
from runs.services import batches
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


def launch(plan):
    batch = wait_for_batch(batches.batch_launch(plan=plan))
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    return batch


def kinds(batch) -> list[tuple[str, bool]]:
    return [(s["kind"], bool(s.get("skipped"))) for s in batch.stages]


def marker(server, database: str) -> tuple:
    db = server.root_connect(database)
    try:
        cursor = db.cursor()
        cursor.execute(
            "SELECT family, tables_count, table_size, sysbench_version, batch_id "
            "FROM benchdash_dataset"
        )
        return cursor.fetchone()
    finally:
        db.close()


def test_a_second_batch_of_the_same_shape_skips_prepare_and_a_new_size_prepares_again(
    celery_worker, make_plan, mariadb_server, mariadb_db
):
    options = {"time": 1, "report-interval": 1, "tables": 2, "table-size": 100}
    plan = make_plan(test="oltp_read_only", options=options, cleanup=False)

    first = launch(plan)
    second = launch(plan)

    assert kinds(first) == [("prepare", False)]
    assert first.stages[0]["reason"] == "no data set yet"
    family, tables, size, version, batch_id = marker(mariadb_server, mariadb_db)
    assert (family, tables, size, batch_id) == ("oltp", 2, 100, first.pk)
    assert version.startswith("sysbench 1.0")
    assert kinds(second) == [("prepare", True)]
    assert f"prepared by batch {first.pk}" in second.stages[0]["reason"]
    assert second.runs.get().status == Status.DONE

    plan.options = {**options, "table-size": 200}
    plan.save()
    third = launch(plan)

    assert kinds(third) == [("cleanup", False), ("prepare", False)]
    assert "table-size=200 (was 100)" in third.stages[0]["reason"]
    assert marker(mariadb_server, mariadb_db)[2] == 200


def test_a_damaged_data_set_is_prepared_again(celery_worker, make_plan, mariadb_server, mariadb_db):
    options = {"time": 1, "report-interval": 1, "tables": 2, "table-size": 100}
    plan = make_plan(test="oltp_read_only", options=options, cleanup=False)
    launch(plan)
    mariadb_server.execute(f"DELETE FROM `{mariadb_db}`.sbtest2 WHERE id <= 10")  # noqa: S608

    again = launch(plan)

    assert kinds(again) == [("cleanup", False), ("prepare", False)]
    assert "sbtest2 has 90 rows" in again.stages[0]["reason"]

    mariadb_server.execute(f"DROP TABLE `{mariadb_db}`.sbtest1")
    once_more = launch(plan)

    assert kinds(once_more) == [("cleanup", False), ("prepare", False)]
    assert "sbtest1 missing" in once_more.stages[0]["reason"]


def test_cleanup_drops_the_marker_with_the_tables(
    celery_worker, make_plan, mariadb_server, mariadb_db
):
    plan = make_plan(test="oltp_read_only", cleanup=True)

    batch = launch(plan)

    assert kinds(batch) == [("prepare", False), ("cleanup", False)]
    db = mariadb_server.root_connect(mariadb_db)
    try:
        cursor = db.cursor()
        cursor.execute("SHOW TABLES")
        assert cursor.fetchall() == ()
    finally:
        db.close()
