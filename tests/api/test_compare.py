"""GET /api/v1/compare gives scripts what the compare page shows: the difference with its
95 % interval and Welch's verdict per cell, for batches that really ran (a few cpu events
each run)."""

from __future__ import annotations

import statistics

import pytest

from runs.analysis.noise import verdicts
from runs.models import Batch, Plan, Status
from runs.services import batches
from runs.web.templatetags.benchdash import num
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture
def two_batches(celery_worker, local_host) -> tuple[Batch, Batch]:
    plan = Plan.objects.create(
        name="cpu twice",
        target=None,
        load_host=local_host,
        test="cpu",
        options={"time": 0, "events": 50, "report-interval": 0},
        threads=[1, 2],
        repeats=3,
    )
    done = []
    for _ in range(2):
        batch = wait_for_batch(batches.batch_launch(plan=plan))
        assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
        done.append(batch)
    return done[0], done[1]


def rates(batch: Batch, threads: int) -> list[float]:
    runs = batch.runs.filter(threads=threads, status=Status.DONE).order_by("round")
    return [float(r.summary["eps"]) for r in runs]


def test_two_batches_are_compared_cell_by_cell_with_welchs_verdict(api, admin_client, two_batches):
    first, second = two_batches

    answer = api.get(f"/api/v1/compare?batches={first.pk},{second.pk}")

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["baseline"] == f"b{first.pk}"
    assert [(s["key"], s["kind"], s["id"], s["runs"], s["unit"]) for s in body["sides"]] == [
        (f"b{first.pk}", "batch", first.pk, 6, "events/s"),
        (f"b{second.pk}", "batch", second.pk, 6, "events/s"),
    ]
    assert body["page"].endswith(f"/compare?s=b{first.pk}&s=b{second.pk}")
    (pair,) = body["pairs"]
    assert pair["side"] == f"b{second.pk}"
    assert [row["threads"] for row in pair["rows"]] == [1, 2]
    # issue 24: the page's cells are one family, corrected together (Holm)
    alone = [verdicts.welch(rates(first, t), rates(second, t)) for t in (1, 2)]
    fixed = dict(zip((1, 2), verdicts.corrected(alone), strict=True))
    assert body["correction"].startswith("Holm's correction")
    assert pair["caveats"][0].startswith("the two ran at different times (")
    assert "interleaved A/A or A/B in one batch" in pair["caveats"][0]
    page = admin_client.get(f"/compare?s=b{first.pk}&s=b{second.pk}").content.decode()
    for row in pair["rows"]:
        expected = verdicts.welch(rates(first, row["threads"]), rates(second, row["threads"]))
        assert row["verdict"] == fixed[row["threads"]].verdict
        assert row["p_adjusted"] == pytest.approx(fixed[row["threads"]].p_adjusted)
        assert row["diff_percent"] == pytest.approx(expected.diff_percent)
        assert row["p_value"] == pytest.approx(expected.p_value)
        assert row["ratio_low"] == pytest.approx(expected.low)
        assert row["ratio_high"] == pytest.approx(expected.high)
        assert row["basis"] == "repeats"
        said, _, power = row["sentence"].partition("3 repeats each)")
        assert said  # the interval with its basis, then for no verdict what it could have seen
        # (the power is said when the spread allows it: runs/analysis/noise/power.py)
        assert power == "" or "with 3 repeats at this noise, a difference under " in power
        assert power == "" or row["verdict"] == "no significant difference"
        assert row["base"]["n"] == row["other"]["n"] == 3
        assert row["base"]["median"] == pytest.approx(sorted(rates(first, row["threads"]))[1])
        # Each side's figure is the geometric mean of its repeats: the ratio is their quotient.
        base = statistics.geometric_mean(rates(first, row["threads"]))
        assert row["base_throughput"] == pytest.approx(base)
        assert row["other_throughput"] / row["base_throughput"] == pytest.approx(row["ratio"])
        assert f'<td class="num">{num(row["base_throughput"])}</td>' in page
        assert f'<td class="num">{num(row["other_throughput"])}</td>' in page
    assert "tps (geo. mean)</th>" in page

    # The baseline is the first side asked for.
    swapped = api.get(f"/api/v1/compare?sides=b{second.pk},b{first.pk}").json()
    assert swapped["baseline"] == f"b{second.pk}"
    assert swapped["pairs"][0]["side"] == f"b{first.pk}"


def test_single_runs_without_interval_samples_have_too_few_repeats(api, two_batches):
    first, second = two_batches
    a = first.runs.get(threads=1, round=0)
    b = second.runs.get(threads=1, round=0)

    body = api.get(f"/api/v1/compare?runs={a.pk},{b.pk}").json()

    assert [s["kind"] for s in body["sides"]] == ["run", "run"]
    (row,) = body["pairs"][0]["rows"]
    assert row["verdict"] == verdicts.TOO_FEW and row["p_value"] is None
    assert row["verdict_text"] == "too few repeats (n=1; 3 needed)"
    assert "too short to be compared on its interval samples" in row["caveat"]


def test_nothing_asked_is_nothing_compared(api):
    body = api.get("/api/v1/compare").json()

    assert body["baseline"] is None and body["sides"] == [] and body["pairs"] == []


def test_an_unknown_or_malformed_side_is_refused_in_json(api):
    missing = api.get("/api/v1/compare?batches=987654321")
    assert missing.status_code == 404
    assert missing.json() == {"field": None, "message": "batch 987654321 does not exist"}

    malformed = api.get("/api/v1/compare?batches=1;2")
    assert malformed.status_code == 400
    assert malformed.json()["field"] == "batches"

    too_long = api.get("/api/v1/compare?runs=99999999999999999999")
    assert too_long.status_code == 400 and too_long.json()["field"] == "runs"


def test_the_compare_endpoint_needs_a_token(anonymous):
    answer = anonymous.get("/api/v1/compare?batches=1,2")

    assert answer.status_code == 401
    assert set(answer.json()) >= {"field", "message"}
