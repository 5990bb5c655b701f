"""A configs axis (and an install or a tests axis) sets cells apart in every answer, as a
settings axis does (issue 47): one series per config in the plan's order, verdicts and
outliers within a config, the why panel between configs, from recorded runs whose cell
keys are the matrix's own."""

from __future__ import annotations

import dataclasses

from runs.analysis import batch_results, comparison
from runs.analysis.auto import rounds
from runs.analysis.auto.settings import Auto, RepeatsAuto, ThreadsAuto
from runs.analysis.axes import cell_axes, cell_axes_order
from runs.analysis.host_metrics import disturbed
from runs.analysis.results import RunFigures
from runs.analysis.series import group_series, plan_order
from runs.analysis.summary import summarise
from runs.sysbench.cells import Axes, ServerAxes, TestSpec
from runs.sysbench.matrix import expand
from runs.sysbench.parser import parse_text
from tests.analysis.recorded import FIXTURES

# the user's order, not the alphabet's: b1e1 is the baseline
CONFIGS = ("b1e1", "b0e1", "b0e0")
SERVERS = {"configs": [{"label": label, "text": "[mysqld]\n"} for label in CONFIGS]}
# each config's recorded runs and redo-log fsyncs per transaction (b0e0: none)
RECORDED = {
    "b1e1": ("insert_f1_t1", 1.0),
    "b0e1": ("insert_f0_t1", 1.0),
    "b0e0": ("insert_f0_t2", 0.0),
}


def cells(**extra):
    return expand(
        test="oltp_insert", fixed_options={"time": 2}, axes=Axes(threads=[1]), repeats=3,
        order="interleaved", seed=0, dataset_policy="shared", **extra,
    )  # fmt: skip


def run_of(cell, output: str, fsyncs: float) -> RunFigures:
    """The cell's run, with a recorded output and its counters, as RunFigures.of reads a Run."""
    result = parse_text((FIXTURES / f"{output}_r{cell.round + 1}.txt").read_text(), exit_code=0)
    transactions = 10_000.0

    class Row:
        pk = cell.position + 1
        position = cell.position
        round = cell.round
        threads = cell.threads
        cell_key = cell.key()
        settings = cell.settings
        summary = summarise(result, warmup_s=0)
        counters = {
            "deltas": {"Innodb_os_log_fsyncs": fsyncs * transactions},
            "derived": {"transactions": transactions},
        }
        host_summary: dict = {}
        bottleneck: dict = {}
        status = "done"
        started_at = finished_at = None
        error = ""

    return RunFigures.of(Row())


def configs_batch() -> list[RunFigures]:
    return [run_of(c, *RECORDED[c.config]) for c in cells(servers=ServerAxes(configs=CONFIGS))]


def order() -> dict[str, list[str]]:
    return plan_order({}, {}, (), SERVERS)


def test_a_runs_config_is_read_from_its_cell_key():
    (cell, *_) = cells(servers=ServerAxes(configs=CONFIGS))

    assert cell_axes(cell.key()) == {"config": cell.config}
    # a plan without the axes keeps the keys and the series its history has
    (plain, *_) = cells()
    assert cell_axes(plain.key()) == {}
    assert "axes" not in run_of(plain, "insert_f1_t1", 1.0).series_key


def test_each_config_is_a_series_in_the_users_order():
    series = group_series(configs_batch(), order())

    assert [s.label for s in series] == ["config=b1e1", "config=b0e1", "config=b0e0"]
    assert [s.axes for s in series] == [{"config": c} for c in CONFIGS]
    assert all(p.n == 3 for s in series for p in s.points)


def test_the_results_answer_per_config_against_the_first():
    runs = configs_batch()
    series = group_series(runs, order())

    found = batch_results.build(runs, series[0].key, {"servers": SERVERS})

    assert [s["label"] for s in found.series] == ["config=b1e1", "config=b0e1", "config=b0e0"]
    assert [r["series"]["label"] for r in found.table] == [s.label for s in series]
    assert [r["point"]["n"] for r in found.table] == [3, 3, 3]
    against_first = [v["series"] for v in found.verdicts if v["against"] == "config=b1e1"]
    assert against_first == ["config=b0e1", "config=b0e0"]
    assert found.summary[0].startswith("config=b0e1 is ")
    assert " than config=b1e1 at 1 thread (95 % CI " in found.summary[0]
    assert found.baseline_label == "config=b1e1"
    assert [line["label"] for line in found.scaling_chart] == [s.label for s in series]
    assert {r["label"] for r in found.runs} == {f"threads=1 config={c}" for c in CONFIGS}
    assert "config" in found.table_tsv.splitlines()[1]


def test_configs_beside_the_baseline_are_judged_against_each_other():
    runs = configs_batch()
    series = group_series(runs, order())

    found = batch_results.build(runs, series[0].key, {"servers": SERVERS})

    # on main b0e1 and b0e0 were each set against b1e1 alone, never against each other
    assert [v["name"] for v in found.verdicts] == [
        "config=b0e1 against config=b1e1",
        "config=b0e0 against config=b1e1",
        "config=b0e0 against config=b0e1",
    ]
    pair = found.verdicts[2]
    assert (pair["series_key"], pair["against_key"]) == (series[2].key, series[1].key)
    # one family: three comparisons corrected together, the baseline's two with them
    assert {v["correction"] for v in found.verdicts} == {"Holm's correction over 3 comparisons"}
    assert found.correction == "Holm's correction over 3 comparisons"
    assert found.paired == "config=b0e0 against config=b0e1"
    assert all(v["p_adjusted"] >= v["p_value"] for v in found.verdicts)
    assert found.summary[2] == (
        "no significant difference between config=b0e0 and config=b0e1 at 1 thread "
        f"(95 % CI {pair['interval']}, 3 repeats each); {pair['power']}"
    )
    # the table and its ratios stay against the baseline
    assert [r["verdict"] and r["verdict"]["correction"] for r in found.table][1:] == [
        "Holm's correction over 3 comparisons"
    ] * 2


def test_two_values_of_each_axis_pair_nothing_beside_the_baseline():
    servers = ServerAxes(configs=("b1e1", "b0e0"), installs=("11.4", "10.11"))
    runs = [run_of(c, *RECORDED[c.config]) for c in cells(servers=servers)]
    plan = {"configs": [{"label": c} for c in ("b1e1", "b0e0")], "installs": ["11.4", "10.11"]}
    series = group_series(runs, plan_order({}, {}, (), plan))

    found = batch_results.build(runs, series[0].key, {"servers": plan})

    assert len(series) == 4
    assert {v["against_key"] for v in found.verdicts} == {series[0].key}
    assert found.correction == "Holm's correction over 3 cells" and found.paired == ""


def test_the_why_panel_explains_a_config_by_its_redo_log_fsyncs():
    runs = configs_batch()
    series = group_series(runs, order())

    found = batch_results.build(runs, series[0].key, {"servers": SERVERS})

    by_other = {w["other"]["label"]: w for w in found.why}
    assert set(by_other) == {"config=b0e1", "config=b0e0"}
    b0e0 = by_other["config=b0e0"]
    assert (b0e0["base"]["log_fsyncs"], b0e0["other"]["log_fsyncs"]) == (1.0, 0.0)
    assert b0e0["moved"].startswith("config=b0e0 removes 1.0 fsync per transaction")
    assert b0e0["fsyncs_moved"] == (
        "config=b0e0 makes 0.00 redo log fsyncs per transaction against 1.00"
    )
    assert by_other["config=b0e1"]["fsyncs_moved"] == ""
    assert by_other["config=b0e1"]["moved"].startswith(
        "config=b0e1 changes no fsync, context switch or I/O count per transaction"
    )


def test_a_slow_repeat_is_compared_with_its_own_configs_repeats_only():
    runs = configs_batch()
    busy = {"kind": "other_processes", "evidence": ["a compiler took 1.8 cores"]}
    slow = next(r for r in runs if r.cell_axes["config"] == "b0e0" and r.round == 0)
    runs = [dataclasses.replace(r, bottleneck=busy) if r is slow else r for r in runs]

    found = disturbed.disturbed_runs(runs)

    # on main the configs pooled: a b1e1 run was called slower than b0e1's repeats
    for d in found:
        assert d.run.cell_axes == slow.cell_axes
        same = [r.throughput for r in runs if r.cell_axes == d.run.cell_axes and r is not d.run]
        figures = sorted(tps for tps in same if tps is not None)
        assert len(figures) == len(same) and d.others_tps == figures[len(figures) // 2]


def test_an_install_and_a_tests_axis_name_their_cells_too():
    tests = [TestSpec("oltp_read_only", {"range-size": 10}), TestSpec("oltp_read_only")]
    found = cells(tests=tests, servers=ServerAxes(installs=("11.4", "10.11")))
    plan_tests: list[dict[str, object]] = [
        {"test": "oltp_read_only", "options": {"range-size": 10}},
        {"test": "oltp_read_only"},
    ]

    named = {tuple(sorted(cell_axes(c.key()).items())) for c in found}

    assert named == {
        (("install", i), ("test", t))
        for i in ("11.4", "10.11")
        for t in ("oltp_read_only range-size=10", "oltp_read_only")
    }
    assert cell_axes_order(plan_tests, {"installs": ["11.4", "10.11"]}) == {
        "test": ["oltp_read_only range-size=10", "oltp_read_only"],
        "install": ["11.4", "10.11"],
    }


def test_the_threads_search_walks_each_configs_line_on_its_own():
    runs = configs_batch()
    baseline = group_series(runs, order())[0].key

    found = rounds.next_cells(Auto(threads=ThreadsAuto(max=4)), runs, 3, baseline)

    # on main the three configs were one line, their runs pooled: one cell added, on none
    assert sorted(cell_axes(c.extends)["config"] for c in found) == sorted(CONFIGS)
    assert {c.threads for c in found} == {2}
    assert {c.extends for c in found} == {r.cell_key for r in runs}


def test_a_repeat_added_extends_its_own_configs_cell():
    runs = [r for r in configs_batch() if r.round < 2]  # two repeats: too few to decide
    baseline = group_series(runs, order())[0].key
    keys = {r.cell_axes["config"]: r.cell_key for r in runs}

    found = rounds.next_cells(Auto(repeats=RepeatsAuto(target_pct=0.01, max=5)), runs, 3, baseline)

    assert found
    for cell in found:
        config = cell_axes(cell.extends)["config"]
        assert cell.extends == keys[config]
        assert f"config={config} at 1 thread" in cell.reason, cell.reason


def test_the_compare_page_sets_configs_in_the_users_order():
    runs = configs_batch()
    base = comparison.Side("b1", "batch 1", runs, order=order())
    other = comparison.Side("b2", "batch 2", list(reversed(runs)), order=order())

    rows = comparison.compare_sides(base, other)

    # main sorted them by key, the alphabet's: b0e0, b0e1, b1e1
    assert [s.label for s in base.series] == [f"config={c}" for c in CONFIGS]
    assert [r.label for r in rows] == [f"config={c}" for c in CONFIGS]
