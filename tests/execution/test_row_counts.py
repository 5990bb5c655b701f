"""Each test runs on the data it expects: a real worker counts a writing run's tables on
the private MariaDB before and after it, records the counts on the run, and warns (the
run, its page and API, the batch) when the run changed them by more than 1 %; the suite's
writers leave the shared table its size."""

from __future__ import annotations

import pytest
from django.test import Client

from runs.models import Status
from runs.services import batches
from runs.sysbench.suites import microbenchmarks
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

ROWS = 1000
OPTIONS = {"time": 1, "report-interval": 1, "tables": 1, "table-size": ROWS}


def of_rows(warnings: list[str]) -> list[str]:
    """The warnings about the rows a run changed (others: a busy host...)."""
    return [w for w in warnings if "than were prepared" in w]


def test_a_deleting_run_is_warned_of_the_rows_it_removed(
    celery_worker, make_plan, django_user_model
):
    tests = [
        {"test": "oltp_point_select", "options": {}, "family": "point"},
        {"test": "oltp_delete", "options": {}, "family": "write", "name": "delete"},
    ]
    plan = make_plan(test="oltp_point_select", tests=tests, options=OPTIONS)
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    reader, delete = batch.runs.order_by("position")

    assert "rows" not in reader.environment  # a reader: not counted
    assert of_rows(reader.warnings) == []
    rows = delete.environment["rows"]
    assert rows["exact"] is True and rows["before"] == {"sbtest1": ROWS}
    left = rows["after"]["sbtest1"]
    assert left < ROWS * 0.99  # oltp_delete only deletes
    said = f"oltp_delete removed {ROWS - left:,} of 1,000\u00d71 rows"
    (warning,) = of_rows(delete.warnings)
    assert warning.startswith(said) and "delete-inserts=1" in warning
    (told,) = of_rows(batch.warnings)
    assert told.startswith(f"delete (oltp_delete), run 2: {said}")

    client = Client()
    client.force_login(django_user_model.objects.create_user("dba", password="dba-pass-123"))
    detail = client.get(f"/api/v1/runs/{delete.pk}").json()
    assert warning in detail["warnings"]
    assert detail["environment"]["rows"]["after"] == {"sbtest1": left}
    assert told in client.get(f"/api/v1/batches/{batch.pk}").json()["warnings"]
    assert said in client.get(f"/runs/{delete.pk}/").content.decode()
    assert told in client.get(f"/batches/{batch.pk}/results").content.decode()


def test_the_suites_writers_keep_the_shared_tables_rows(
    celery_worker, make_plan, client, django_user_model
):
    writers = [item for item in microbenchmarks() if item["family"] == "write"]
    plan = make_plan(test=writers[0]["test"], tests=writers, options=OPTIONS, repeats=2)
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=400)
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))

    runs = list(batch.runs.order_by("position"))
    shared = [r for r in runs if r.test != "oltp_insert"]
    assert len(shared) == 8  # update-index, update-nonindex, delete-insert, write-only x 2
    for run in shared:
        rows = run.environment["rows"]
        before, after = rows["before"]["sbtest1"], rows["after"]["sbtest1"]
        assert before == ROWS and abs(after - before) <= ROWS * 0.01, (run.options, rows)
        assert of_rows(run.warnings) == []
    # The insert grows its table by design: its data set is prepared again before each of
    # its repeats, so each starts from the rows prepared, and the growth is said as a fact.
    inserts = [r for r in runs if r.test == "oltp_insert"]
    assert len(inserts) == 2
    for insert in inserts:
        rows = insert.environment["rows"]
        assert rows["before"] == {"sbtest1": ROWS}
        grown = rows["after"]["sbtest1"] - ROWS
        assert grown > ROWS * 0.01
        assert rows["said"].startswith(f"oltp_insert added {grown:,} rows to 1,000\u00d71 (+")
        assert of_rows(insert.warnings) == []
    assert of_rows(batch.warnings) == []
    rebuilt = [
        s
        for s in batch.stages
        if s["kind"] == "prepare" and s["group"] in {r.position for r in inserts}
    ]
    assert len(rebuilt) == 2, batch.stages
    client.force_login(django_user_model.objects.create_user("dba", password="dba-pass-123"))
    said = inserts[0].environment["rows"]["said"]
    assert said in client.get(f"/runs/{inserts[0].pk}/").content.decode()
