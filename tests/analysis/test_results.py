"""The results pages' arithmetic: series, medians and whiskers, peaks, ratios, differences,
chart shapes, comparisons. Pure functions, no database."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from runs.analysis import charts, comparison, report_table, results
from runs.analysis.noise import verdicts
from runs.analysis.series import group_series, plan_order

T0 = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)


def run(
    id,
    threads,
    tps,
    *,
    flush="1",
    binlog="0",
    round=0,
    status="done",
    p95=None,
    qps=None,
    errors=0,
    start=0,
):
    settings = {"innodb_flush_log_at_trx_commit": flush, "sync_binlog": binlog}
    return results.RunFigures(
        id=id,
        position=id - 1,
        round=round,
        threads=threads,
        settings=settings,
        axis_options={},
        status=status,
        summary={}
        if tps is None
        else {"tps": tps, "qps": qps or tps * 20, "latency_pct_ms": p95, "errors": errors},
        started_at=T0 + timedelta(seconds=start),
    )


def test_runs_group_into_one_series_per_settings_with_a_median_and_min_max_per_thread_count():
    runs = [
        run(1, 1, 100, round=0),
        run(2, 1, 130, round=1),
        run(3, 1, 110, round=2),
        run(4, 4, 400, round=0),
        run(5, 1, 50, flush="2"),
    ]

    series = group_series(runs)

    assert [s.label for s in series] == ["flush=1 sync_binlog=0", "flush=2 sync_binlog=0"]
    point = series[0].at(1)
    assert point is not None
    assert (point.median, point.low, point.high, point.n) == (110, 100, 130, 3)
    assert [p.threads for p in series[0].points] == [1, 4]
    assert series[0].colour != series[1].colour


def test_series_sort_numbers_as_numbers():
    runs = [run(1, 1, 1.0, flush="10"), run(2, 1, 1.0, flush="2")]
    assert [s.settings["innodb_flush_log_at_trx_commit"] for s in group_series(runs)] == [
        "2",
        "10",
    ]


def test_failed_runs_count_as_failed_and_stay_out_of_the_median():
    series = group_series(
        [
            run(1, 2, 100),
            run(2, 2, None, status="failed", round=1),
            run(3, 2, None, round=2, status="queued"),
        ]
    )
    point = series[0].at(2)
    assert point is not None
    assert point.values == (100.0,)
    assert point.failed == 1


def test_the_peak_is_the_best_mean_and_the_falloff_is_measured_at_the_largest_count():
    series = group_series([run(1, 1, 3000), run(2, 4, 11000), run(3, 16, 9000), run(4, 64, 7150)])
    peak = series[0].peak
    assert peak is not None
    assert (peak.threads, peak.value) == (4, 11000)
    assert peak.falloff_pct == pytest.approx(-35.0)


def test_a_series_still_rising_has_no_falloff():
    peak = group_series([run(1, 1, 17), run(2, 64, 2400)])[0].peak
    assert peak is not None
    assert peak.threads == 64 and peak.falloff_pct is None


def test_ratio_to_the_baseline_matches_the_seed_example():
    # sync_binlog=1,flush=1 at 53,752 against sync_binlog=0,flush=1 at 105,980 is 0.51
    series = group_series([run(1, 8, 105_980, binlog="0"), run(2, 8, 53_752, binlog="1")])
    baseline = series[0].key
    ratios = report_table.ratios(series, baseline)
    assert round(ratios[(series[1].key, 8)], 2) == 0.51
    assert ratios[(baseline, 8)] == 1.0


def test_the_report_table_puts_settings_side_by_side_per_thread_count():
    series = group_series(
        [run(1, 1, 10), run(2, 2, 20), run(3, 1, 5, flush="2"), run(4, 2, 40, flush="2")]
    )
    rows = report_table.report_table(series, series[1].key)
    assert [(r.threads, r.series.label) for r in rows] == [
        (1, "flush=1 sync_binlog=0"),
        (1, "flush=2 sync_binlog=0"),
        (2, "flush=1 sync_binlog=0"),
        (2, "flush=2 sync_binlog=0"),
    ]
    assert rows[0].first_of_threads and rows[0].rows_for_threads == 2
    assert rows[0].ratio == pytest.approx(2.0) and rows[1].is_baseline  # of the geometric means
    tsv = report_table.table_tsv(rows, "tps").splitlines()
    assert tsv[0].split("\t")[:3] == ["threads", "setting", "tps (geometric mean of the repeats)"]
    assert tsv[0].split("\t")[4] == "p95 ms"
    assert tsv[1].split("\t")[2] == "10.00"


def test_the_reference_line_comes_from_the_environment_or_the_target():
    assert (
        charts.reference_threads(
            {"reference": {"threads": 10, "cpu_cores": 4, "disk_count": 2}}, None, None
        )[0]
        == 10
    )
    assert charts.reference_threads({}, 8, 1) == (17, "8 cores x 2 + 1 disks")
    assert charts.reference_threads({}, 8, None) == (None, "")


def test_differing_keys_are_those_not_the_same_everywhere():
    maps = [{"a": "1", "b": "2"}, {"a": "1", "b": "3"}, {"a": "1"}]
    assert results.differing_keys(maps) == ["b"]
    assert results.differing_keys([{"a": 1}]) == []


def test_long_series_are_downsampled_keeping_their_peaks_and_troughs():
    points = [(float(t), 100.0) for t in range(5000)]
    points[1234] = (1234.0, 999.0)
    points[4321] = (4321.0, 1.0)
    kept = charts.xy(points, max_points=100)
    assert len(kept) <= 100
    assert [1234.0, 999.0] in kept and [4321.0, 1.0] in kept
    assert kept[0][0] == 0.0 and kept[-1][0] == 4999.0


def test_xy_drops_gaps():
    assert charts.xy([(1, None), (2, 5.0)]) == [[2.0, 5.0]]


def test_latency_percentiles_and_cdf_come_from_the_histogram():
    histogram = [[1.0, 50], [2.0, 40], [5.0, 9], [50.0, 1]]
    pcts = charts.latency_percentiles(histogram)
    assert pcts["p50"] == 1.0 and pcts["p90"] == 2.0 and pcts["p99"] == 5.0
    assert pcts["p99.9"] == 50.0
    cdf = charts.latency_cdf(histogram)
    assert cdf[0] == [1.0, 0.5] and cdf[-1] == [50.0, 1.0]


def test_a_long_cdf_is_thinned_but_ends_at_one():
    histogram = [[float(i), 1] for i in range(1, 1001)]
    cdf = charts.latency_cdf(histogram, max_points=100)
    assert len(cdf) <= 101 and cdf[-1] == [1000.0, 1.0]


def test_the_timeline_lists_the_runs_with_points_in_order_and_labels_their_levels():
    runs = [run(2, 2, 20, start=30), run(1, 1, 10, start=0), run(4, 2, 20, start=90)]
    # the points as timeseries.timeline_series gives them: on the batch's clock already
    points = {1: [[1.0, 10.0]], 2: [[31.0, 20.0], [32.5, 21.0]]}
    timeline = charts.timeline_chart(runs, points, {1: "#111111"})
    assert [line["points"] for line in timeline] == [points[1], points[2]]  # run 4: none
    assert [line["colour"] for line in timeline] == ["#111111", charts.PALETTE[-1]]
    # issue 24: each level of the threads labelled with its count where it changes
    assert [line["level"] for line in timeline] == ["1 thread", "2 threads"]
    again = charts.timeline_chart([*runs, run(3, 2, 21, start=60)], {**points, 3: []}, {})
    assert [line["level"] for line in again] == ["1 thread", "2 threads", ""]


def test_a_bucket_gives_its_trough_and_its_peak_in_time_order_once_each():
    assert charts.bucket_points([5.0, 12.0], [90.0, 3.0]) == [[3.0, 90.0], [12.0, 5.0]]
    assert charts.bucket_points([7.0, 4.0], [7.0, 4.0]) == [[4.0, 7.0]]
    assert charts.bucket_points(None, None) == []


def test_the_timeline_shares_its_points_between_the_runs():
    assert charts.timeline_buckets(4) * 2 * 4 <= charts.TIMELINE_POINTS
    assert charts.timeline_buckets(200) * 2 * 200 <= charts.TIMELINE_POINTS
    assert charts.timeline_buckets(100_000) == 2  # a run keeps a trough and a peak


def test_a_page_of_chosen_runs_fits_the_point_budget():
    per_run = 4 * charts.MAX_CHART_POINTS + charts.MAX_CDF_POINTS + 1  # tps, qps, latency, counter
    assert charts.TIMELINE_POINTS + charts.MAX_SELECTED_RUNS * per_run <= charts.POINT_BUDGET


def test_the_default_selection_is_each_series_first_repeat_at_its_peak():
    series = group_series(
        [run(1, 1, 10), run(2, 4, 40), run(3, 4, 41, round=1), run(4, 1, 50, flush="2")]
    )
    assert charts.default_selection(series) == [2, 4]


def test_compare_says_too_few_repeats_below_three():
    base = comparison.Side("b1", "one", [run(1, 1, 100), run(2, 1, 102, round=1)])
    other = comparison.Side("b2", "two", [run(3, 1, 150), run(4, 1, 160, round=1)])
    [row] = comparison.compare_sides(base, other)
    assert row.verdict is not None
    assert row.verdict.text == "too few repeats (n=2; 3 needed)"
    # the ratio of the geometric means, (150 x 160)^½ / (100 x 102)^½
    assert row.verdict.diff_percent == pytest.approx(53.39, rel=1e-3)


def test_compare_runs_welch_with_three_repeats_each():
    base = comparison.Side(
        "b1", "one", [run(i, 1, v, round=i) for i, v in enumerate([100, 101, 99])]
    )
    higher = comparison.Side(
        "b2", "two", [run(i, 1, v, round=i) for i, v in enumerate([150, 151, 149])]
    )
    same = comparison.Side(
        "b3", "three", [run(i, 1, v, round=i) for i, v in enumerate([99, 102, 100])]
    )
    assert verdict(base, higher) == verdicts.FASTER
    assert verdict(base, same) == verdicts.SAME


def verdict(base, other):
    [row] = comparison.compare_sides(base, other)
    assert row.verdict is not None
    return row.verdict.verdict


def test_compare_of_two_single_series_matches_cells_by_threads_alone():
    base = comparison.Side("b1", "one", [run(1, 1, 100, flush="1"), run(2, 2, 180, flush="1")])
    other = comparison.Side("b2", "two", [run(3, 1, 120, flush="2"), run(4, 4, 300, flush="2")])
    rows = comparison.compare_sides(base, other)
    assert [(r.threads, r.base is not None, r.other is not None) for r in rows] == [
        (1, True, True),
        (2, True, False),
        (4, False, True),
    ]
    assert rows[0].label == "flush=1 sync_binlog=0 → flush=2 sync_binlog=0"


def test_non_sql_runs_use_their_own_rate():
    assert results.throughput({"eps": 8481.7}) == (8481.7, "events/s")
    assert results.throughput({"mib_per_s": 8801.9}) == (8801.9, "MiB/s")
    assert results.throughput({"read_mib_per_s": 1.5, "written_mib_per_s": 0.5}) == (2.0, "MiB/s")


def test_axis_options_come_from_the_cell_key():
    key = json.dumps({"threads": 1, "settings": {}, "options": {"tables": "4"}})
    assert results.axis_options(key) == {"tables": "4"}
    assert results.axis_options("import threads=4") == {}


def test_the_matrix_grid_lays_repeats_out_by_series_and_threads():
    threads, rows = charts.matrix_grid(
        [
            run(1, 1, 1),
            run(2, 2, 1),
            run(3, 1, 1, round=1),
            run(4, 2, None, flush="2", status="queued"),
        ]
    )
    assert threads == [1, 2]
    assert [[len(c) for c in row.cells] for row in rows] == [[2, 1], [0, 1]]


def test_a_runs_figures_round_trip_through_json_as_a_stored_answer_keeps_them():
    figures = replace(
        run(7, 16, 812.5, p95=4.2, start=30),
        counters={"derived": {"log_fsyncs_per_transaction": 0.98}, "missing": []},
        finished_at=T0 + timedelta(seconds=90),
        host_summary={"server": {"cpu_busy_pct": 71.5}},
    )
    unfinished = replace(run(8, 1, None, status="interrupted"), started_at=None)

    stored = [json.loads(json.dumps(f.to_json())) for f in (figures, unfinished)]

    assert [results.RunFigures.from_json(s) for s in stored] == [figures, unfinished]
    assert stored[0]["started_at"] == "2024-05-01T02:00:30+00:00"
    assert results.RunFigures.from_json(stored[0]).latency_ms == 4.2


class StoredRun:
    """The fields of a Run that RunFigures.of reads, as the results query gives them."""

    def __init__(self, pk, target_id, target_name, tps, *, axis=True, flush="1"):
        self.pk, self.position, self.round, self.threads = pk, pk, 0, 1
        self.settings = {"innodb_flush_log_at_trx_commit": flush}
        key = {"options": {}, "settings": self.settings, "threads": 1}
        self.cell_key = json.dumps({**key, "target": target_id} if axis else key)
        self.target_id = target_id
        self.target = type("Target", (), {"name": target_name})()
        self.status, self.summary, self.counters = "done", {"tps": tps}, {}
        self.started_at = self.finished_at = None
        self.error, self.host_summary, self.bottleneck = "", {}, {}


def test_the_target_is_an_axis_named_with_the_plans_first_target_the_baseline():
    # "zeta" is the plan's first target: the baseline, though its name sorts last
    stored = [
        StoredRun(1, 7, "zeta", 100),
        StoredRun(2, 3, "alpha", 150),
        StoredRun(3, 7, "zeta", 110, flush="2"),
        StoredRun(4, 3, "alpha", 160, flush="2"),
    ]
    figures = [results.RunFigures.of(r) for r in stored]
    order = plan_order(
        {"innodb_flush_log_at_trx_commit": ["1", "2"]}, {}, [{"name": "zeta"}, {"name": "alpha"}]
    )

    series = group_series(figures, order)

    assert [s.label for s in series] == [
        "target=zeta flush=1",
        "target=alpha flush=1",
        "target=zeta flush=2",
        "target=alpha flush=2",
    ]
    assert figures[0].axis_options == {"target": "zeta"}
    # A plan of one target: no target axis, the keys and labels as before.
    alone = results.RunFigures.of(StoredRun(5, 7, "zeta", 100, axis=False))
    assert alone.axis_options == {} and alone.label == "threads=1 flush=1"
