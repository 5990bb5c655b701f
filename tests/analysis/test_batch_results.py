# ruff: noqa: RUF001  (the times sign is what people read in verdicts)
"""A batch's results, assembled from recorded runs: the summary, the verdicts, what the
auto modes found, why each extra run ran, and the open-loop chart."""

from __future__ import annotations

import dataclasses

import pytest

from runs.analysis import batch_results
from runs.analysis.results import RunFigures
from runs.analysis.series import group_series, plan_order
from tests.analysis.recorded import RATES, insert_cell, point_select_at


def test_the_summary_says_how_much_faster_at_each_thread_count():
    runs = [*insert_cell(1, 1), *insert_cell(0, 1), *insert_cell(1, 4), *insert_cell(0, 4)]
    series = group_series(runs)
    flush_1 = next(s for s in series if s.label == "flush=1")

    found = batch_results.build(runs, flush_1.key, {})

    assert len(found.summary) == 2
    assert found.summary[0].startswith("flush=0 is ")
    assert " faster than flush=1 at 1 thread (95 % CI " in found.summary[0]
    assert found.summary[1].endswith("at 4 threads (95 % CI 1.4–6.1×, 3 repeats each)")
    assert found.auto == [] and found.extra_runs == []
    flush_0 = next(s for s in series if s.label == "flush=0")
    assert {v["threads"] for v in found.verdicts if v["series_key"] == flush_0.key} == {1, 4}
    body = found.to_json()
    assert body["baseline_label"] == "flush=1" and body["verdicts"][0]["verdict"] == "faster"


def test_a_rate_search_answers_with_its_conclusion_and_its_chart():
    runs = [point_select_at(rate) for rate in RATES]
    params = {"auto": {"rate": {"start": 1000, "slo_p95_ms": 50}}}
    reasons = {r.id: f"rate search: {r.axis_options['rate']} tps" for r in runs[1:]}

    found = batch_results.build(runs, group_series(runs)[0].key, params, reasons)

    assert found.summary == []  # rates are not set against each other in sentences
    assert found.auto[0].startswith("all runs, 2 threads: sustainable up to 16,000 tps")
    assert [r["reason"] for r in found.extra_runs][:2] == [
        "rate search: 2000 tps",
        "rate search: 4000 tps",
    ]
    (line,) = found.rate_chart
    assert [p["offered"] for p in line["points"]] == sorted(RATES)
    point = line["points"][-2]
    assert (point["offered"], point["p95"], point["queue"]) == (28000, 707.07, 16402)
    assert point["achieved"] == pytest.approx(22039.3)  # the whole run's, as the search's
    # issue 24: offered rates get no verdicts, no why, no "peaks at" for one thread count
    assert found.verdicts == [] and found.why == []
    assert all(r["verdict"] is None for r in found.table)
    assert all(s["peak"] is None and s["single_threads"] == 2 for s in found.series)


def test_a_rate_axis_without_the_search_says_what_it_sustained():
    # issue 24: a plan offering its own rates (an option axis `rate`) got no answer on main
    runs = [point_select_at(rate) for rate in RATES]
    params = {"option_axes": {"rate": [str(rate) for rate in RATES]}}

    found = batch_results.build(runs, group_series(runs)[0].key, params)

    assert found.summary == [
        "all runs, 2 threads: sustainable up to 24,000 tps: 24,000 held 1/1 (achieved 23,564 "
        "tps, queue ≤ 0, p95 82.96 ms); 28,000 failed 1/1 (achieved 22,039 of 28,000 tps); "
        "estimated chance of failing: 0 % up to 24,000 tps, 100 % at 28,000; no latency SLO: "
        "held counts any latency, up to p95 82.96 ms here (set slo_p95_ms to bound it)"
    ]
    assert found.auto == []  # no auto mode ran
    # and still no throughput verdicts or why between offered rates
    assert found.verdicts == [] and found.why == [] and found.correction == ""
    assert all(r["verdict"] is None for r in found.table)


def with_setting(run, name, value):
    return dataclasses.replace(run, settings={**run.settings, name: value})


def test_the_plans_first_value_is_the_baseline_and_sentences_read_forwards():
    # issue 24: flush ["1", "0"] on recorded runs; main took flush=0 (alphabetically
    # first) as the baseline and said "flush=1 is ...x slower than flush=0"
    runs = [*insert_cell(1, 4), *insert_cell(0, 4)]
    runs = [with_setting(r, "max_connections", "1100") for r in runs]
    params = {"server_settings": {"innodb_flush_log_at_trx_commit": ["1", "0"],
                                  "max_connections": ["1100"]}}  # fmt: skip
    order = plan_order(params["server_settings"], {})
    series = group_series(runs, order)
    assert [s.label for s in series] == ["flush=1", "flush=0"]  # the constant said once
    assert [s.label for s in group_series(runs)] == [
        "flush=0 max_connections=1100", "flush=1 max_connections=1100",
    ]  # fmt: skip

    found = batch_results.build(runs, series[0].key, params)

    assert found.baseline_label == "flush=1" and found.plan_wide == ["max_connections=1100"]
    (sentence,) = found.summary
    assert sentence.startswith("flush=0 is ") and " faster than flush=1 at 4 threads" in sentence
    # one estimator: the table's "x baseline" is the verdict's ratio, as the sentence says
    (row,) = [r for r in found.table if not r["is_baseline"]]
    assert row["ratio"] == pytest.approx(row["verdict"]["ratio"])
    assert f"{row['ratio']:.1f}×" in sentence


# --- issue 36: one estimator, every percentile labelled as the plan asked ------------------


def _run(run_id, flush, value, *, pct=95.0, pct_ms=12.0):
    return RunFigures(
        id=run_id, position=run_id, round=run_id % 3, threads=1,
        settings={"innodb_flush_log_at_trx_commit": flush}, axis_options={}, status="done",
        summary={"tps": value, "latency_pct": pct, "latency_pct_ms": pct_ms},
    )  # fmt: skip


def test_the_tables_throughput_its_ratio_and_its_verdict_read_one_estimator():
    # issue 36: b1e0 showed 351.1 tps (a median) against the baseline's 459.4 and
    # "x baseline 1.06" (a ratio of geometric means): two cells ordered one way by the
    # column and the other way by the ratio. These repeats reproduce it.
    base = [_run(1, "1", 200.0), _run(2, "1", 459.4), _run(3, "1", 470.0)]
    other = [_run(4, "0", 340.0), _run(5, "0", 351.1), _run(6, "0", 420.0)]
    runs = base + other
    series = group_series(runs, plan_order({"innodb_flush_log_at_trx_commit": ["1", "0"]}, {}))
    found = batch_results.build(runs, series[0].key, {})

    base_row, other_row = sorted(found.table, key=lambda r: not r["is_baseline"])
    medians = base_row["point"]["median"], other_row["point"]["median"]
    assert medians == (459.4, 351.1)  # what the column showed before: lower, yet "x 1.05"
    means = base_row["point"]["mean"], other_row["point"]["mean"]
    assert means[1] / means[0] == pytest.approx(other_row["ratio"])  # the column's ratio
    assert other_row["ratio"] == pytest.approx(other_row["verdict"]["ratio"])  # the verdict's
    assert other_row["ratio"] == pytest.approx(1.05, abs=0.01) and means[1] > means[0]
    assert found.estimator == "geometric mean of the repeats"
    tsv = found.table_tsv.splitlines()
    assert tsv[0].split("\t")[2] == "tps (geometric mean of the repeats)"
    assert {line.split("\t")[2] for line in tsv[1:]} == {f"{m:.2f}" for m in means}
    # the peaks and the scaling chart read the same estimator
    assert [s["peak"] for s in found.series] == [None, None]  # one thread count: no curve
    assert sorted(c["points"][0]["y"] for c in found.scaling_chart) == sorted(means)


def test_a_percentile_99_plan_labels_its_latency_p99_everywhere():
    # issue 36: with percentile=99 the table's column was headed "p95 ms", holding p99s
    runs = [_run(i, "1", 100.0 + i, pct=99.0, pct_ms=30.0 + i) for i in (1, 2, 3)]
    found = batch_results.build(runs, group_series(runs)[0].key, {"options": {"percentile": 99}})
    assert found.latency_label == "p99"
    assert found.table_tsv.splitlines()[0].split("\t")[4] == "p99 ms"
    # the geometric mean of the repeats' p99s (31, 32, 33 ms), as their throughput's
    assert found.table[0]["point"]["latency_ms"] == pytest.approx((31 * 32 * 33) ** (1 / 3))
    assert batch_results.latency_label([], {"percentile": 99.9}) == "p99.9"
    assert batch_results.latency_label([], {}) == "p95"
