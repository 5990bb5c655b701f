"""A TPC-C batch's figures leave benchdash by every way its results do, not only its page:
the results API (`tpcc`: each cell's tpmC where the script prints its NewOrders, tps, the
mix, ignored errors per second, warehouses), the runs CSV (a column each, per run) and the
offline report; another batch's answer has `tpcc: null` and no such columns (issue 48
item 5). Batches stored as a worker leaves them (tests/web/test_results_tpcc.py's)."""

from __future__ import annotations

import csv
import functools
import io

import pytest

from runs.analysis.tpcc import NO_NEW_ORDERS
from runs.models import LoadHost, Plan
from tests.web.test_results_tpcc import tpcc_batch

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture
def make_batch(make_batch, owner):
    """Stored batches of a plan of the API's user (tests/web's stored plan is the pages')."""
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name="tpcc", target=None, load_host=local, test="cpu", created_by=owner
    )
    return functools.partial(make_batch, plan)


MIX_SHARES = {"NewOrder": 25 / 55, "Payment": 24 / 55, "OrderStatus": 2 / 55}


def test_the_results_api_carries_each_cells_tpmc_mix_and_warehouses(api, make_batch):
    batch = tpcc_batch(make_batch, "tpcc_counters.lua", mix=True)

    answer = api.get(f"/api/v1/batches/{batch.pk}/results")

    assert answer.status_code == 200, answer.text
    figures = answer.json()["tpcc"]
    assert figures["no_tpmc_reason"] == ""
    one, two = figures["cells"]
    assert (one["label"], one["repeats"], one["tpmc"]) == ("1 thread", 2, pytest.approx(1500))
    assert (one["tps"], two["tps"]) == (pytest.approx(50), pytest.approx(100))
    assert one["errors_per_s"] == pytest.approx(0.5)  # the warmup's 99/s left out
    assert (one["warehouses"], one["table_sets"], one["total_warehouses"]) == (2, 3, 6)
    mix = {m["name"]: m for m in one["mix"]}
    assert list(mix) == ["NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel"]
    assert mix["NewOrder"]["per_s"] == pytest.approx(25.0)
    for name, share in MIX_SHARES.items():
        assert mix[name]["share"] == pytest.approx(share)


def test_a_runs_api_answer_carries_its_tpcc_figures(api, make_batch):
    batch = tpcc_batch(make_batch, "tpcc_counters.lua", mix=True)
    run = batch.runs.order_by("position").first()

    figures = api.get(f"/api/v1/runs/{run.pk}").json()["tpcc"]

    assert (figures["script"], figures["tpmc"]) == ("tpcc_counters.lua", pytest.approx(1500))
    assert (figures["tps"], figures["errors_per_s"]) == (50.0, pytest.approx(0.5))
    assert (figures["warehouses"], figures["total_warehouses"]) == (2, 6)
    assert [m["per_s"] for m in figures["mix"]] == [25.0, 24.0, 2.0, 2.0, 2.0]
    other = make_batch(threads=(1,), repeats=1, samples=3).runs.first()
    assert api.get(f"/api/v1/runs/{other.pk}").json()["tpcc"] is None


def test_without_new_orders_the_api_says_why_there_is_no_tpmc(api, make_batch):
    batch = tpcc_batch(make_batch, "tpcc.lua", mix=False)

    figures = api.get(f"/api/v1/batches/{batch.pk}/results").json()["tpcc"]

    assert figures["no_tpmc_reason"] == NO_NEW_ORDERS
    assert [(c["tpmc"], c["mix"], c["total_warehouses"]) for c in figures["cells"]] == [
        (None, [], 6),
        (None, [], 6),
    ]


def test_the_runs_csv_has_each_runs_tpcc_figures(api, make_batch):
    batch = tpcc_batch(make_batch, "tpcc_counters.lua", mix=True)
    api.login("owner", "owner-pass-1")  # the export is the results page's

    answer = api.get(f"/batches/{batch.pk}/export.csv?what=runs")

    assert answer.status_code == 200, answer.text
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert len(rows) == 4
    for row in rows:
        assert float(row["tpmc"]) == pytest.approx(1500)
        assert float(row["ignored_errors_per_s"]) == pytest.approx(0.5)
        assert (row["warehouses"], row["table_sets"], row["total_warehouses"]) == ("2", "3", "6")
        assert float(row["new_order_per_s"]) == 25.0 and float(row["delivery_per_s"]) == 2.0


def test_the_offline_report_has_the_tpcc_section(api, make_batch):
    batch = tpcc_batch(make_batch, "tpcc_counters.lua", mix=True)

    html = api.get(f"/api/v1/batches/{batch.pk}/report").text

    assert '<section id="results-tpcc">' in html
    assert '<td class="num">1,500</td>' in html
    assert "1 thread, the mix: NewOrder 25.00/s (45 %), Payment 24.00/s (44 %)" in html


def test_another_batchs_answers_carry_no_tpcc(api, make_batch):
    batch = make_batch(threads=(1,), repeats=1, samples=3)

    assert api.get(f"/api/v1/batches/{batch.pk}/results").json()["tpcc"] is None
    api.login("owner", "owner-pass-1")
    header = api.get(f"/batches/{batch.pk}/export.csv?what=runs").text.splitlines()[0]
    assert "tpmc" not in header.split(",")
    assert 'id="results-tpcc"' not in api.get(f"/api/v1/batches/{batch.pk}/report").text
