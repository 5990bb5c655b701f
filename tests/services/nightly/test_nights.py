"""A batch's night (runs/services/nightly/nights.py): each cell's figures stored with the batch as
it ends, computed once for batches stored before, and what the history, its API, the
nightly check and the batch list read, in a number of queries that does not grow with the
nights. The nights are stored as a worker leaves them: a scheduled batch each, done, with
its runs' summaries (three repeats of one cell, or two cells)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from runs.models import Batch, LaunchedBy, LoadHost, Plan, Run, Status
from runs.services.nightly import check as nightly_check
from runs.services.nightly import history, nights

OPTIONS = {"time": 60, "tables": 1, "table-size": 10000}
START = timezone.now() - timedelta(days=400)


@pytest.fixture
def plan(db: None) -> Plan:
    host = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    return Plan.objects.create(
        name="nightly inserts", load_host=host, test="oltp_insert", options=OPTIONS, threads=[1, 4]
    )


@pytest.fixture
def client_in(db: None, django_user_model: Any) -> Client:
    client = Client()
    client.force_login(django_user_model.objects.create_user("dba", password="dba-pass-123"))
    return client


def night(plan: Plan, day: int, tps: float = 1000.0, status: str = Status.DONE) -> Batch:
    """A scheduled night `day` days after START: threads 1 and 4, three repeats each."""
    when = START + timedelta(days=day)
    batch = Batch.objects.create(
        plan=plan,
        params={"test": plan.test, "options": OPTIONS, "repeats": 3},
        seed=1,
        status=status,
        launched_by=LaunchedBy.SCHEDULE,
        started_at=when,
        finished_at=when + timedelta(minutes=3),
        environment={"server": {"variables": {f"v{i}": "x" * 20 for i in range(650)}}},
    )
    Batch.objects.filter(pk=batch.pk).update(created_at=when)
    batch.refresh_from_db()
    Run.objects.bulk_create(
        Run(
            batch=batch,
            position=position,
            round=repeat,
            cell_key=json.dumps({"options": {}, "settings": {}, "threads": threads}),
            threads=threads,
            options=OPTIONS,
            status=Status.DONE,
            summary={
                "tps": threads * tps + d,
                "latency_pct": 95,
                "latency_pct_ms": 2.0 + d,
                "errors": 0,
            },
        )
        for position, (threads, repeat, d) in enumerate(
            (t, r, d) for t in (1, 4) for r, d in enumerate((-1.0, 0.0, 1.0))
        )
    )
    return batch


def make_nights(plan: Plan, first: int, count: int) -> list[Batch]:
    return [night(plan, day) for day in range(first, first + count)]


def queries(call: Any) -> int:
    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured.captured_queries)


def test_a_batchs_night_is_stored_as_it_ends_with_each_cells_medians(plan):
    batch = night(plan, 0)

    nightly_check.batch_finished(batch=batch)  # where every batch ends

    batch.refresh_from_db()
    assert batch.night["version"] == nights.NIGHT_VERSION
    cells = {c["threads"]: c for c in batch.night["cells"]}
    assert sorted(cells) == [1, 4]
    assert cells[1]["throughput"] == 1000.0 and cells[4]["throughput"] == 4000.0
    assert cells[1]["latency_ms"] == 2.0 and cells[1]["latency_pct"] == 95
    assert cells[1]["repeats"] == 3 and cells[1]["throughput_unit"] == "tps"
    runs = Run.objects.filter(batch=batch)
    assert nights.nights_cells([batch])[batch.pk] == nights.batch_cells(batch, runs)


def test_a_night_stored_before_nights_were_is_computed_once_and_stored(plan):
    old = make_nights(plan, 0, 3)
    running = night(plan, 3, status=Status.RUNNING)
    assert all(b.night == {} for b in [*old, running])

    first = queries(lambda: history.plan_history(plan=plan))
    again = queries(lambda: history.plan_history(plan=plan))

    assert first == 3  # the page of nights, the runs of those not stored, storing them
    assert again == 2  # the page, and the runs of the night still running
    for batch in old:
        batch.refresh_from_db()
        assert batch.night["version"] == nights.NIGHT_VERSION
    running.refresh_from_db()
    assert running.night == {}  # still running: computed on each read, stored never


def test_the_nightly_check_reads_the_figures_stored_with_the_nights(plan):
    earlier = make_nights(plan, 0, 6)
    for batch in earlier:
        nightly_check.batch_finished(batch=batch)
    # A run changed behind the stored night's back: the check still reads the night.
    Run.objects.filter(batch=earlier[-1], threads=1).update(summary={"tps": 99999.0})
    tonight = night(plan, 6, tps=700.0)
    nightly_check.batch_finished(batch=tonight)

    analysis = nightly_check.batch_analyse(batch=tonight, notify=False)

    cell = next(c for c in analysis["cells"] if c["threads"] == 1)
    (throughput, _) = cell["checks"]
    assert throughput["baseline"] == 1000.0 and throughput["value"] == 700.0
    assert throughput["nights"] == 6 and throughput["verdict"] == "regression"


def test_the_history_reads_as_many_queries_at_8_and_at_80_nights(plan, client_in):
    def counted() -> list[int]:
        history.plan_history(plan=plan, nights=366)  # the nights not stored are, once
        return [
            queries(lambda: history.plan_history(plan=plan)),
            queries(lambda: client_in.get(f"/plans/{plan.pk}/history")),
            queries(lambda: client_in.get(f"/plans/{plan.pk}/history?nights=366")),
            queries(lambda: client_in.get(f"/api/v1/plans/{plan.pk}/history")),
            queries(lambda: client_in.get(f"/api/v1/plans/{plan.pk}/history?nights=366")),
        ]

    make_nights(plan, 0, 8)
    at_8 = counted()
    make_nights(plan, 8, 72)
    at_80 = counted()

    assert at_8 == at_80
    assert at_8[0] == 1  # the page of nights, read with their stored figures


def test_the_history_is_paged_by_nights_older_pages_through_before(plan, client_in):
    made = make_nights(plan, 0, 10)
    ids = [b.pk for b in made]

    newest = client_in.get(f"/api/v1/plans/{plan.pk}/history?nights=4").json()
    assert [n["batch"] for n in newest["nights"]] == ids[:-5:-1]
    assert newest["previous"] is None
    assert newest["next"].endswith(f"?nights=4&before={ids[6]}")

    middle = client_in.get(newest["next"]).json()
    assert [n["batch"] for n in middle["nights"]] == ids[5:1:-1]
    assert middle["previous"].endswith("?nights=4")  # the newest page
    assert client_in.get(middle["previous"]).json()["nights"] == newest["nights"]

    oldest = client_in.get(middle["next"]).json()
    assert [n["batch"] for n in oldest["nights"]] == ids[1::-1]
    assert oldest["next"] is None
    assert [n["batch"] for n in client_in.get(oldest["previous"]).json()["nights"]] == ids[5:1:-1]

    page = client_in.get(f"/plans/{plan.pk}/history?nights=4&before={ids[6]}")
    assert page.status_code == 200
    html = page.content.decode()
    assert (
        f'href="/plans/{plan.pk}/history?nights=4&amp;before={ids[2]}" id="history-older"' in html
    )
    assert f'href="/plans/{plan.pk}/history?nights=4" id="history-newer"' in html


def test_a_cursor_that_is_no_night_of_the_plan_is_refused(plan, client_in):
    other = Plan.objects.create(name="other", load_host=plan.load_host, test="oltp_insert")
    stranger = night(other, 0)
    make_nights(plan, 0, 2)

    answer = client_in.get(f"/api/v1/plans/{plan.pk}/history?before={stranger.pk}")
    assert answer.status_code == 404  # no such page (the schema's answers allow no 400 here)
    assert f"{stranger.pk} is not a batch of this plan's history" in answer.json()["message"]
    assert client_in.get(f"/plans/{plan.pk}/history?before={stranger.pk}").status_code == 404


def test_the_batch_list_reads_as_many_queries_at_8_and_80_batches_without_the_environment(
    plan, client_in
):
    def counted() -> list[int]:
        return [
            queries(lambda: client_in.get("/")),
            queries(lambda: client_in.get(f"/?plan={plan.pk}")),
            queries(lambda: client_in.get("/api/v1/batches")),
            queries(lambda: client_in.get(f"/plans/{plan.pk}/")),
        ]

    make_nights(plan, 0, 8)
    at_8 = counted()
    make_nights(plan, 8, 72)
    with CaptureQueriesContext(connection) as captured:
        listed = client_in.get("/api/v1/batches").json()
    at_80 = counted()

    assert at_8 == at_80
    assert listed["count"] == 80 and len(listed["results"]) == 50
    assert listed["results"][0]["runs_total"] == 6 and listed["results"][0]["runs_done"] == 6
    page = next(q["sql"] for q in captured.captured_queries if "LIMIT 50" in q["sql"])
    assert '"environment"' not in page and '"night"' not in page
    assert '"options"' not in page and '"facts"' not in page and '"private_key"' not in page
    assert "GROUP BY" not in page  # the counts are the page's own, not every batch's
