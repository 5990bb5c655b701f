"""A TPC-C run's figures (runs/analysis/tpcc.py) from what its script printed: tpmC where
the script prints its NewOrders (sysbench-tpcc's tpcc_counters.lua form), else the plain
reason; the warehouses from its options; ignored errors per second."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.analysis.tpcc import NO_NEW_ORDERS, Interval, is_tpcc, tpcc_run
from runs.sysbench.parser import parse_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sysbench"
# sysbench-tpcc's command line (its README), as a run's argv keeps it.
TPCC_ARGV = ["sysbench", "--threads=2", "--time=3", "./tpcc.lua", "--tables=10", "--scale=100"]
# Written with tpcc_counters.lua's format string (its counters need a patched sysbench).
COUNTERS_LINES = "\n".join(
    f"[ {t}s ] thds: 2 tps: {tps:.2f} qps: 250.00 (r/w/o: 110.00/120.00/20.00) "
    f"lat (ms,95%): 21.50 err/s {err:.2f} reconn/s: 0.00 "
    f"no: {no:.2f} pt: {pt:.2f} os: 1.00 dl: 1.00 sl: 1.00"
    for t, tps, err, no, pt in ((1, 10, 1.0, 4, 3), (2, 12, 0.0, 6, 3))
)


def intervals_of(text: str) -> list[Interval]:
    return [Interval(s.tps, s.errors_per_s, s.extra) for s in parse_text(text).samples]


@pytest.mark.parametrize(
    "argv",
    [
        TPCC_ARGV,
        ["sysbench", "./tpcc_print.lua", "--scale=2"],
        ["sysbench", "x.lua", "--warehouses=4"],
    ],
)
def test_it_recognises_a_tpcc_run_by_its_script_or_warehouses(argv):
    assert is_tpcc(argv)


def test_an_oltp_run_is_not_tpcc():
    argv = ["sysbench", "--tables=4", "--table-size=10000", "oltp_read_write", "run"]

    assert not is_tpcc(argv)
    assert tpcc_run(argv=argv, intervals=[]) is None


def test_tpmc_is_the_new_order_rate_times_60_where_the_script_prints_it():
    run = tpcc_run(argv=TPCC_ARGV, intervals=intervals_of(COUNTERS_LINES))

    assert run is not None
    assert run.tpmc == pytest.approx(5.0 * 60)  # NewOrder 4 and 6 per second
    assert run.tps == pytest.approx(11.0)
    assert run.errors_per_s == pytest.approx(0.5)
    assert [(m.name, m.per_s) for m in run.mix] == [
        ("NewOrder", 5.0),
        ("Payment", 3.0),
        ("OrderStatus", 1.0),
        ("Delivery", 1.0),
        ("StockLevel", 1.0),
    ]
    assert run.mix[0].share == pytest.approx(5 / 11)
    assert (run.warehouses, run.table_sets, run.total_warehouses) == (100, 10, 1000)
    assert run.no_tpmc_reason == ""


def test_a_mix_field_left_out_is_no_rate_rather_than_an_error():
    # what the results page's database means give for a field no line printed: None
    interval = Interval(10.0, 0.0, {"new_order_per_s": 4.0, "stock_level_per_s": None})
    run = tpcc_run(argv=TPCC_ARGV, intervals=[interval])

    assert run is not None and run.tpmc == pytest.approx(240.0)
    assert dict((m.name, m.per_s) for m in run.mix)["StockLevel"] == 0.0


def test_a_script_that_prints_no_new_orders_gets_tps_and_the_reason():
    # Captured from sysbench 1.0.20: the Lua report_default form, as tpcc.lua prints.
    text = (FIXTURES / "hook_report_default.txt").read_text()

    run = tpcc_run(argv=["sysbench", "./tpcc_print.lua", "--scale=2"], intervals=intervals_of(text))

    assert run is not None
    assert run.tpmc is None and run.mix == ()
    assert run.no_tpmc_reason == NO_NEW_ORDERS
    assert run.tps is not None and run.tps > 0
    assert run.errors_per_s == 0.0
    assert (run.warehouses, run.total_warehouses) == (2, 2)


def test_the_final_reports_tps_stands_and_warmup_is_left_out():
    intervals = [Interval(100.0, 9.0, {}, in_warmup=True), Interval(10.0, 1.0, {})]

    run = tpcc_run(argv=TPCC_ARGV, intervals=intervals, tps=10.5)

    assert run is not None
    assert (run.tps, run.errors_per_s) == (10.5, 1.0)
