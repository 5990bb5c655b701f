"""The nightly verdict, read by a script: a plan's nights on a real worker against the
private MariaDB, the last one made slower (the trigger every insert goes through sleeps
three times as long, as tests/services/nightly/test_history.py does). The batch detail carries its
check, the batch list filters on it, and the plan's history is the page's table."""

from __future__ import annotations

import pytest

from runs.analysis.nightly import regressions
from runs.models import Alert
from runs.services import batches
from runs.services.nightly import history
from tests.helpers import wait_for_batch, wait_for_confirmation
from tests.services.nightly.test_history import NIGHTLY_OPTIONS, audit_trigger, night

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_a_slower_last_night_is_readable_from_the_api(
    api, celery_worker, make_plan, target, mariadb_server
):
    keeper = make_plan(name="prepare sbtest", options={**NIGHTLY_OPTIONS, "time": 1}, cleanup=False)
    assert wait_for_batch(batches.batch_launch(plan=keeper)).status == "done"
    audit_trigger(mariadb_server, target.database, 0.03)
    plan = make_plan(
        name="nightly inserts",
        options=NIGHTLY_OPTIONS,
        server_settings={"innodb_flush_log_at_trx_commit": ["2"]},
        dataset_policy="existing",
        regression_threshold_pct=40,  # this machine is shared: see test_history.py
    )
    earlier = [night(plan) for _ in range(regressions.MIN_NIGHTS)]
    audit_trigger(mariadb_server, target.database, 0.15)  # five-fold: out of any load's noise
    slow = night(plan)
    # The slow night's re-run answers before anyone is told (runs/services/nightly/alerts.py),
    # by the time the product promises for it.
    alert = wait_for_confirmation(slow)
    assert alert.state == Alert.State.CONFIRMED, alert.verdict
    answered = api.get(f"/api/v1/alerts/{alert.pk}").json()
    assert answered["status"] == "confirmed" and answered["confirmation_status"] == "done"
    assert answered["confirmation_due"] is None and answered["waiting_for"] == ""

    # The batch detail: the check, cell by cell.
    detail = api.get(f"/api/v1/batches/{slow.pk}").json()
    analysis = detail["analysis"]
    assert analysis["status"] == regressions.REGRESSION
    (cell,) = analysis["cells"]
    assert cell["flagged"] and cell["label"] == "threads=1 flush=2"
    tps = cell["checks"][0]
    assert tps["metric"] == "throughput" and tps["nights"] == regressions.MIN_NIGHTS
    assert tps["value"] < tps["baseline"] and tps["change_pct"] < -tps["limit_pct"]
    assert api.get(f"/api/v1/batches/{keeper.batches.get().pk}").json()["analysis"] is None

    # "Did last night regress?"
    flagged = api.get(f"/api/v1/batches?plan={plan.pk}&regressed=true").json()["results"]
    assert [b["id"] for b in flagged] == [slow.pk]
    calm = api.get(f"/api/v1/batches?plan={plan.pk}&regressed=false").json()["results"]
    assert sorted(b["id"] for b in calm) == sorted(b.pk for b in earlier)

    # The history: the page's table, newest night first.
    answer = api.get(f"/api/v1/plans/{plan.pk}/history?nights=30")
    assert answer.status_code == 200, answer.text
    table = answer.json()
    assert table["unit"] == "tps" and table["latency"] == "p95"
    assert table["rule"]["threshold_pct"] == 40 and table["rule"]["window"] == 7
    (row,) = table["cells"]
    assert row["label"] == "threads=1 flush=2"
    assert [n["batch"] for n in table["nights"]] == [slow.pk, *(b.pk for b in reversed(earlier))]
    last, before = table["nights"][0], table["nights"][1]
    assert last["verdict"] == regressions.REGRESSION and last["flags"]
    assert last["cells"][0]["id"] == row["id"] and last["cells"][0]["flagged"]
    assert last["cells"][0]["throughput"] < before["cells"][0]["throughput"]
    assert before["verdict"] == regressions.NOT_ENOUGH and not before["flags"]
    # The same figures the page draws.
    chart = history.plan_history(plan=plan, nights=30).chart()
    (series,) = chart["cells"]
    assert [n["cells"][0]["throughput"] for n in reversed(table["nights"])] == pytest.approx(
        series["throughput"]
    )


def test_the_history_of_an_unknown_plan_is_a_404(api):
    answer = api.get("/api/v1/plans/999999/history")
    assert answer.status_code == 404
    assert answer.json()["field"] is None
