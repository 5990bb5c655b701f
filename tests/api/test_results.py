"""GET /api/v1/batches/{id}/results and /report: what a batch answers, for scripts, from a
batch that really ran with repeats: auto (cpu, two prime limits, a few events a run)."""

from __future__ import annotations

import pytest

from runs.models import Batch, Plan, Status, StoredResults
from runs.services import batches
from tests.helpers import wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture
def cpu_batch(celery_worker, local_host) -> Batch:
    plan = Plan.objects.create(
        name="primes",
        target=None,
        load_host=local_host,
        test="cpu",
        options={"time": 0, "events": 200, "report-interval": 0},
        threads=[1],
        option_axes={"cpu-max-prime": [2000, 8000]},
        repeats=1,
        auto={"repeats": {"target_pct": 1, "max": 4}},
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan))
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    return batch


def test_a_batch_answers_with_verdicts_intervals_and_the_reasons_of_its_extra_runs(api, cpu_batch):
    answer = api.get(f"/api/v1/batches/{cpu_batch.pk}/results")

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["unit"] == "events/s"
    assert body["series"] == ["cpu-max-prime=2000", "cpu-max-prime=8000"]
    assert body["baseline"] == "cpu-max-prime=2000"
    (verdict,) = body["verdicts"]
    assert verdict["series"] == "cpu-max-prime=8000" and verdict["threads"] == 1
    assert verdict["verdict"] == "slower"  # four times the primes to find
    assert verdict["ratio_low"] <= verdict["ratio"] <= verdict["ratio_high"] < 1
    assert verdict["n_base"] >= 3 and verdict["basis"] == "repeats"
    said = (
        f"cpu-max-prime=8000 is {verdict['difference']} than cpu-max-prime=2000 at 1 thread "
        f"(95 % CI {verdict['interval']}, {_repeats(verdict)})"
    )
    # Besides the verdict, only a repeat the suite's other processes slowed, singled out.
    others = [line for line in body["summary"] if line != said]
    assert said in body["summary"]
    assert all("slower than its cell's other repeats" in line for line in others), others
    assert body["auto"][0].startswith("repeats: ")
    runs = cpu_batch.runs.count()
    assert len(body["extra_runs"]) == runs - 6  # 3 repeats a cell to start with
    assert all(r["reason"].startswith("repeat ") for r in body["extra_runs"])
    assert body["report"].endswith(f"/api/v1/batches/{cpu_batch.pk}/report")
    site = body["report"].removesuffix(f"/api/v1/batches/{cpu_batch.pk}/report")
    for row in body["runs"]:
        assert row["url"] == f"{site}/runs/{row['id']}/"
        assert row["log"] == f"{site}/api/v1/runs/{row['id']}/log"
    assert api.get(body["runs"][-1]["log"]).status_code == 200

    swapped = api.get(f"/api/v1/batches/{cpu_batch.pk}/results?baseline=1").json()
    assert swapped["verdicts"][0]["verdict"] == "faster"


def test_the_worker_stores_the_answer_as_the_batch_ends_and_the_api_serves_it(api, cpu_batch):
    stored = StoredResults.objects.filter(batch=cpu_batch)
    wait_until(stored.exists, 60, "the answer stored as the batch ended")
    (answer,) = stored
    assert answer.key == "baseline=0" and answer.computed_at >= cpu_batch.finished_at

    first = api.get(f"/api/v1/batches/{cpu_batch.pk}/results")
    held = api.get(
        f"/api/v1/batches/{cpu_batch.pk}/results", headers={"If-None-Match": first.headers["ETag"]}
    )

    assert (
        first.status_code == 200 and first.json()["summary"] == answer.content["results"]["summary"]
    )
    assert "private" in first.headers["Cache-Control"]
    assert held.status_code == 304 and held.content == b""
    assert StoredResults.objects.get(pk=answer.pk).computed_at == answer.computed_at  # not rebuilt


def _repeats(verdict):
    if verdict["n_base"] == verdict["n_other"]:
        return f"{verdict['n_base']} repeats each"
    return f"{verdict['n_other']} and {verdict['n_base']} repeats"


def test_the_report_downloads_as_one_html_file(api, cpu_batch):
    answer = api.get(f"/api/v1/batches/{cpu_batch.pk}/report")

    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/html")
    assert answer.headers["Content-Disposition"] == (
        f'attachment; filename="benchdash-batch-{cpu_batch.pk}.html"'
    )
    assert '<canvas id="report-scaling-chart"' in answer.text
    assert "Chart.js v" in answer.text  # inlined, not linked


def test_results_of_a_missing_batch_and_without_a_token(api, anonymous):
    missing = api.get("/api/v1/batches/987654321/results")
    assert missing.status_code == 404 and set(missing.json()) >= {"field", "message"}
    assert anonymous.get("/api/v1/batches/1/results").status_code == 401
    assert anonymous.get("/api/v1/batches/1/report").status_code == 401


def test_a_baseline_that_is_no_index_is_refused(api, cpu_batch):
    answer = api.get(f"/api/v1/batches/{cpu_batch.pk}/results?baseline=first")
    assert answer.status_code == 400 and answer.json()["field"] == "baseline"
