"""A suite: a plan with a tests axis of four tests and two settings against the private
MariaDB, run by a real worker: one data set prepared once and shared, the readers before
the writers, each run with its own test and options; its relative table read against the
runs' own figures. And an item that rebuilds its data set gets a prepare of its own."""

from __future__ import annotations

import statistics

import pytest

from runs.analysis.noise import verdicts
from runs.models import Status
from runs.services import batches
from runs.services.answers import relative
from runs.sysbench.suites import microbenchmarks
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

OPTIONS = {"time": 1, "report-interval": 1, "tables": 1, "table-size": 200}


def four_tests() -> list[dict]:
    names = ("point-select", "range-100", "range-sum", "update-index")
    return [item for item in microbenchmarks() if item["name"] in names]


def test_a_suite_shares_one_data_set_and_its_table_reads_the_runs_own_figures(
    celery_worker, make_plan
):
    tests = four_tests()
    plan = make_plan(
        test=tests[0]["test"],
        tests=tests,
        options=OPTIONS,
        server_settings={"sync_binlog": ["1", "0"]},
        repeats=3,
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=500)
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))

    # one data set, prepared once and dropped once, for all 24 runs
    assert [(s["kind"], bool(s.get("skipped"))) for s in batch.stages] == [
        ("prepare", False),
        ("cleanup", False),
    ]
    runs = list(batch.runs.order_by("position"))
    assert len(runs) == 4 * 2 * 3
    writers = [r.position for r in runs if r.test == "oltp_update_index"]
    assert max(r.position for r in runs if r.test != "oltp_update_index") < min(writers)
    for run in runs:  # each run ran its own test, with its item's options
        assert run.test in run.argv
        if run.options.get("sum-ranges") == 1:
            assert "--sum-ranges=1" in run.argv and "--skip-trx=on" in run.argv

    table = relative.batch_relative(batch=batch)
    assert table is not None
    assert table.axis == "sync_binlog" and table.columns == ["sync_binlog=1", "sync_binlog=0"]
    assert [f.name for f in table.families] == ["point", "range", "range-aggregation", "write"]
    for family in table.families:
        (row,) = family.rows
        item = next(t for t in tests if t["name"] == row.label)
        mine = [r for r in runs if r.test == item["test"] and _is_item(r, item)]
        base = [r for r in mine if r.settings["sync_binlog"] == "1"]
        other = [r for r in mine if r.settings["sync_binlog"] == "0"]
        tps = [r.summary["tps"] for r in base]
        assert row.cells[0].throughput == pytest.approx(statistics.geometric_mean(tps))
        ratio = verdicts.geometric_ratio(tps, [r.summary["tps"] for r in other])
        verdict = row.cells[1].verdict
        assert verdict is not None and verdict.ratio == pytest.approx(ratio)
        assert verdict.n_base == 3 and verdict.n_other == 3
        cpu = [r.host_summary["hosts"][0].get("db", {}).get("cpu_us_per_tx") for r in base]
        if all(c is not None for c in cpu):
            assert row.cells[0].per_tx.cpu_us == pytest.approx(statistics.median(cpu), abs=1e-3)
    assert table.summary
    lines = list(relative.batch_relative_csv(batch=batch))
    assert "".join(lines).count("\n") == 1 + 4 * 2


def _is_item(run, item) -> bool:
    return all(run.options.get(name) == value for name, value in item["options"].items())


def test_an_item_that_rebuilds_gets_its_own_fresh_data_set(celery_worker, make_plan):
    tests = [
        {"test": "oltp_point_select", "options": {}, "family": "point"},
        {"test": "oltp_insert", "options": {}, "family": "write", "rebuild": True},
    ]
    plan = make_plan(test="oltp_point_select", tests=tests, options=OPTIONS, cleanup=False)
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    kinds = [(s["kind"], bool(s.get("skipped"))) for s in batch.stages]
    # the readers' prepare; then the rebuild: the tables there cleaned up, prepared again
    assert kinds == [("prepare", False), ("cleanup", False), ("prepare", False)]
    assert batch.stages[-1]["reason"].startswith("rebuilt for oltp_insert")
    assert [r.test for r in batch.runs.order_by("position")] == ["oltp_point_select", "oltp_insert"]
