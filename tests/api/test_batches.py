"""Batches, runs and samples through the API, on rows as a worker leaves them."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from runs.models import Plan, Run, Sample


@pytest.fixture
def plan(offline_target, local_host) -> Plan:
    return Plan.objects.create(
        name="inserts", target=offline_target, load_host=local_host, threads=[1, 2]
    )


@pytest.fixture
def running_run(plan, make_batch) -> Run:
    batch = make_batch(plan, status="running", environment={"server": {"version": "11.8"}})
    Run.objects.create(
        batch=batch,
        position=0,
        round=0,
        cell_key="a",
        threads=1,
        status="done",
        summary={"tps": 100.0},
        verified_settings={"sync_binlog": "1"},
        settings={"sync_binlog": "1"},
    )
    run = Run.objects.create(
        batch=batch, position=1, round=0, cell_key="b", threads=2, status="running"
    )
    Sample.objects.bulk_create(
        Sample(run=run, seq=seq, time_s=seq, threads=2, tps=10.0 * seq, received_at=timezone.now())
        for seq in range(1, 6)
    )
    return run


def test_batches_are_filtered_by_plan_target_status_and_date(api, plan, make_batch, local_host):
    other = Plan.objects.create(name="other", load_host=local_host, test="cpu", threads=[1])
    done = make_batch(plan, status="done")
    failed = make_batch(plan, status="failed", launched_by="schedule")
    cpu = make_batch(other, status="done")
    long_ago = timezone.now() - timedelta(days=30)
    type(done).objects.filter(pk=cpu.pk).update(created_at=long_ago)

    def ids(query: str) -> list[int]:
        answer = api.get(f"/api/v1/batches{query}")
        assert answer.status_code == 200, answer.text
        return [b["id"] for b in answer.json()["results"]]

    assert ids("") == [failed.pk, done.pk, cpu.pk]
    assert ids(f"?plan={plan.pk}") == [failed.pk, done.pk]
    assert ids(f"?target={plan.target_id}&status=done") == [done.pk]
    assert ids("?launched_by=schedule") == [failed.pk]
    since = (timezone.now() - timedelta(days=1)).isoformat()
    assert ids(f"?created_before={since.replace('+', '%2B')}") == [cpu.pk]
    assert ids(f"?created_after={since.replace('+', '%2B')}") == [failed.pk, done.pk]

    refused = api.get("/api/v1/batches?status=finished")
    assert refused.status_code == 400
    assert refused.json()["field"] == "status"


def test_every_list_is_paginated(api, plan, make_batch):
    for _ in range(3):
        make_batch(plan)

    page = api.get("/api/v1/batches?page=1").json()

    assert set(page) == {"count", "next", "previous", "results"}
    assert page["count"] == 3
    for path in (
        "targets",
        "load-hosts",
        "plans",
        "tokens",
        f"batches/{page['results'][0]['id']}/runs",
    ):
        assert "count" in api.get(f"/api/v1/{path}").json(), path


def test_a_batch_shows_its_progress_and_its_runs(api, running_run):
    batch = api.get(f"/api/v1/batches/{running_run.batch_id}").json()

    assert (batch["runs_done"], batch["runs_total"]) == (1, 2)
    assert batch["current_run"]["id"] == running_run.pk
    assert batch["current_run"]["label"] == "threads=2"
    runs = api.get(f"/api/v1/batches/{running_run.batch_id}/runs").json()["results"]
    assert [r["status"] for r in runs] == ["done", "running"]
    assert runs[0]["summary"] == {"tps": 100.0}
    assert runs[0]["verified_settings"] == {"sync_binlog": "1"}


def test_a_batch_cancelled_in_its_first_run_has_run_none_of_its_eight(api, plan, make_batch):
    # issue 56: runs_done counted cancelled and skipped runs, and such a batch read 8/8.
    batch = make_batch(plan, status="cancelled")
    Run.objects.bulk_create(
        Run(batch=batch, position=i, round=0, cell_key=str(i), threads=1,
            status="cancelled" if i == 0 else "skipped")
        for i in range(8)
    )  # fmt: skip

    detail = api.get(f"/api/v1/batches/{batch.pk}").json()
    (listed,) = api.get(f"/api/v1/batches?plan={plan.pk}").json()["results"]

    for told in (detail, listed):
        counts = [told[k] for k in ("runs_done", "runs_cancelled", "runs_skipped", "runs_total")]
        assert counts == [0, 1, 7, 8]


def test_a_run_shows_its_summary_settings_and_environment(api, running_run):
    done = running_run.batch.runs.get(position=0)

    run = api.get(f"/api/v1/runs/{done.pk}").json()

    assert run["summary"] == {"tps": 100.0}
    assert run["environment"] == {"server": {"version": "11.8"}}
    assert {"counters", "error", "error_hint", "verified_settings"} <= set(run)


def test_samples_are_polled_after_a_seq_with_a_limit(api, running_run):
    url = f"/api/v1/runs/{running_run.pk}/samples"

    first = api.get(f"{url}?limit=2").json()
    assert [s["seq"] for s in first["results"]] == [1, 2]
    assert first["finished"] is False
    assert first["next"].endswith(f"{url}?limit=2&after=2")

    rest = api.get(f"{url}?after=2").json()
    assert [s["seq"] for s in rest["results"]] == [3, 4, 5]
    assert (rest["last_seq"], rest["next"], rest["finished"]) == (5, None, False)

    Run.objects.filter(pk=running_run.pk).update(status="done")
    last = api.get(f"{url}?after=5").json()
    assert (last["results"], last["last_seq"], last["finished"]) == ([], 5, True)

    assert api.get(f"{url}?after=-1").json()["field"] == "after"
    # A JSON page holds at most 5000 whatever the limit; past the CSV's limit is a 400.
    assert api.get(f"{url}?limit=100000").status_code == 200
    assert api.get(f"{url}?limit=2000000").json()["field"] == "limit"
    assert api.get("/api/v1/runs/999999/samples").status_code == 404


@pytest.mark.parametrize(
    "how", [{"params": {"format": "csv"}}, {"headers": {"Accept": "text/csv"}}]
)
def test_samples_come_as_csv_too(api, running_run, how):
    answer = api.get(f"/api/v1/runs/{running_run.pk}/samples?after=3", **how)

    assert answer.headers["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [(r["seq"], r["tps"]) for r in rows] == [("4", "40.0"), ("5", "50.0")]
    assert answer.headers["X-Last-Seq"] == "5"
    assert answer.headers["X-Run-Status"] == "running"


def test_a_whole_run_comes_as_one_streamed_csv_and_json_stays_paged(api, running_run):
    Sample.objects.bulk_create(
        Sample(run=running_run, seq=seq, time_s=seq, threads=2, tps=1.0, received_at=timezone.now())
        for seq in range(6, 12_001)
    )
    url = f"/api/v1/runs/{running_run.pk}/samples"

    answer = api.get(f"{url}?format=csv&after=2&limit=1000000")

    assert answer.status_code == 200, answer.text[:300]
    assert "Content-Length" not in answer.headers  # streamed as it is read
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [r["seq"] for r in rows] == [str(seq) for seq in range(3, 12_001)]
    assert rows[0]["received_at"].endswith("Z")
    assert answer.headers["X-Last-Seq"] == "12000"
    assert api.get(f"{url}?format=csv&after=2&limit=10").headers["X-Last-Seq"] == "12"
    # A JSON page holds at most 5000 whatever the limit; past the CSV's limit is a 400.
    assert api.get(f"{url}?limit=100000").status_code == 200
    assert api.get(f"{url}?limit=2000000").json()["field"] == "limit"
