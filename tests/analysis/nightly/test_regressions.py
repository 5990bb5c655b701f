"""The regression rule on numbers: baseline = median of the previous nights, noise =
1.4826 x MAD of them, flagged beyond max(threshold, 3 x noise) in the bad direction."""

from __future__ import annotations

import pytest

from runs.analysis.nightly import regressions
from runs.analysis.nightly.check import analyse
from runs.analysis.nightly.regressions import (
    IMPROVEMENT,
    LATENCY,
    NO_FIGURE,
    NOT_ENOUGH,
    REGRESSION,
    STEADY,
    THROUGHPUT,
    CellNight,
    RunResult,
    cell_identity,
    figure,
    judge,
    night_cells,
)
from runs.analysis.percent import signed_pct

TARGET = {"name": "db-1", "engine": "mariadb", "host": "10.0.0.5", "port": 3306, "database": "sb"}


def tps(value, history, threshold=5.0):
    return judge(THROUGHPUT, name="tps", value=value, history=history, threshold_pct=threshold)


def p95(value, history, threshold=5.0):
    return judge(LATENCY, name="p95", value=value, history=history, threshold_pct=threshold)


# --- the verdict on one figure ----------------------------------------------------------------


def test_a_drop_beyond_the_threshold_and_the_noise_is_flagged_with_its_figures():
    check = tps(8210, [10050, 10100, 9980, 10020, 10070, 10000, 10060])

    assert check.verdict == REGRESSION and check.flagged
    assert check.baseline == 10050
    assert check.change_pct == pytest.approx(-18.31, abs=0.01)
    assert check.noise_pct == pytest.approx(1.4826 * 30 / 10050 * 100)
    assert check.limit_pct == 5.0  # the quiet nights leave the plan's threshold in charge
    assert check.text == "tps 8,210 vs baseline 10,050 (\u221218 %), noise \u00b10.4 %"
    assert check.rule == (
        "regression beyond 5.0 % = max(5 %, 3 \u00d7 noise \u00b10.4 %), over 7 nights"
    )


def test_a_drop_inside_three_times_the_noise_is_not_flagged():
    # Nights that vary by about 3 %: 3 x noise is about 9 %, so a 7 % drop is noise.
    history = [100, 103, 97, 100, 104, 96, 100]
    check = tps(93, history)

    assert check.noise_pct == pytest.approx(1.4826 * 3)
    assert check.limit_pct == pytest.approx(3 * 1.4826 * 3)
    assert check.change_pct == pytest.approx(-7)
    assert check.verdict == STEADY and not check.flagged


def test_the_same_drop_on_quiet_nights_is_flagged():
    check = tps(93, [100, 100.2, 99.9, 100, 100.1, 99.8, 100])

    assert check.limit_pct == 5.0
    assert check.verdict == REGRESSION


def test_a_change_below_the_threshold_is_not_flagged_even_without_noise():
    assert tps(96, [100] * 7).verdict == STEADY
    assert tps(94.9, [100] * 7).verdict == REGRESSION
    assert tps(95, [100] * 7).verdict == STEADY  # exactly at the limit is not beyond it


def test_the_plans_threshold_is_used():
    assert tps(85, [100] * 7, threshold=20).verdict == STEADY
    assert tps(79, [100] * 7, threshold=20).verdict == REGRESSION


def test_one_wild_night_does_not_inflate_the_noise():
    # A standard deviation would make this history look noisy (and hide the drop).
    history = [100, 101, 99, 100, 160, 100, 101]
    check = tps(90, history)

    assert check.noise_pct == pytest.approx(1.4826)
    assert check.verdict == REGRESSION


def test_latency_rising_is_a_regression():
    check = p95(12.4, [10.1, 10.2, 10.0, 10.1, 10.3])

    assert check.verdict == REGRESSION
    assert check.unit == "ms"
    assert check.text.startswith("p95 12.4 ms vs baseline 10.1 ms (+23 %), noise ")


def test_latency_falling_is_an_improvement_not_a_flag():
    check = p95(7.0, [10.1, 10.2, 10.0, 10.1, 10.3])

    assert check.verdict == IMPROVEMENT and not check.flagged


def test_throughput_rising_is_an_improvement_not_a_flag():
    check = tps(130, [100, 101, 99, 100, 100])

    assert check.verdict == IMPROVEMENT and not check.flagged
    assert "(+30 %)" in check.text


def test_fewer_than_five_nights_is_not_enough_history():
    check = tps(50, [100, 100, 100, 100])

    assert check.verdict == NOT_ENOUGH and not check.flagged
    assert check.text == "not enough history: 4 of 5 nights"
    assert check.baseline is None


def test_five_nights_are_enough():
    assert tps(50, [100] * 5).verdict == REGRESSION


def test_a_night_without_the_figure_says_so():
    check = p95(None, [10.0] * 7)

    assert check.verdict == NO_FIGURE
    assert check.text == "p95: no figure"


def test_a_zero_baseline_gives_no_percentage():
    check = tps(10, [0, 0, 0, 0, 0])

    assert check.verdict == NO_FIGURE
    assert "baseline is 0" in check.text


# --- cells and nights --------------------------------------------------------------------------


def run(tps_value, *, threads=1, settings=None, options=None, status="done", latency=2.0):
    options = {"time": 60, "threads": threads, **(options or {})}
    summary = {"tps": tps_value, "latency_pct": 95.0, "latency_pct_ms": latency}
    return RunResult(
        cell_key=f'{{"options":{{}},"settings":{{}},"threads":{threads}}}',
        threads=threads,
        settings=settings or {},
        options=options,
        status=status,
        summary=summary if tps_value is not None else {},
    )


def night(*runs, test="oltp_insert", target=TARGET, script=None):
    return night_cells(runs, test=test, target=target, script=script)


def only(cells: dict[str, CellNight]) -> CellNight:
    assert len(cells) == 1
    return next(iter(cells.values()))


def test_a_nights_value_is_the_median_of_its_successful_repeats():
    cell = only(night(run(100), run(90), run(120), run(5, status="failed"), run(None)))

    assert cell.throughput == 100
    assert cell.repeats == 3
    assert cell.latency_ms == 2.0
    assert cell.metric_name(THROUGHPUT) == "tps"
    assert cell.metric_name(LATENCY) == "p95"
    assert cell.label == "threads=1"


def test_a_cell_is_identified_by_everything_that_shapes_its_figures():
    same = cell_identity(
        test="oltp_insert", options={"time": 60}, settings={"sync_binlog": "1"}, threads=4,
        target=TARGET, script=None,
    )  # fmt: skip
    renamed = {**TARGET, "name": "db-1 (renamed)"}

    def other(**changes):
        values = {
            "test": "oltp_insert", "options": {"time": 60}, "settings": {"sync_binlog": "1"},
            "threads": 4, "target": TARGET, "script": None,
        }  # fmt: skip
        return cell_identity(**{**values, **changes})

    assert other() == same
    assert other(target=renamed) == same  # a new name is the same server
    assert other(options={"time": "60"}) == same  # as the frozen JSON may spell it
    assert other(test="oltp_read_write") != same
    assert other(options={"time": 30}) != same
    assert other(settings={"sync_binlog": "0"}) != same
    assert other(threads=8) != same
    assert other(target={**TARGET, "host": "10.0.0.6"}) != same
    assert other(script="function event() end") != same


def test_nights_of_other_parameters_are_not_history():
    current = night(run(50))
    same = [night(run(100)) for _ in range(5)]
    longer = [night(run(100, options={"time": 120})) for _ in range(5)]

    judged = analyse(current, longer + same, threshold_pct=5, history_nights=7)
    assert judged.cells[0].checks[0].nights == 5
    assert judged.status == REGRESSION

    judged = analyse(current, longer, threshold_pct=5, history_nights=7)
    assert judged.status == NOT_ENOUGH
    assert judged.cells[0].checks[0].nights == 0


def test_the_baseline_is_made_of_the_last_n_nights():
    # Most recent first: the last seven nights ran at 100, the older ones at 200.
    previous = [night(run(100)) for _ in range(7)] + [night(run(200)) for _ in range(5)]
    judged = analyse(night(run(100)), previous, threshold_pct=5, history_nights=7)

    check = judged.cells[0].checks[0]
    assert check.nights == 7 and check.baseline == 100
    assert judged.status == STEADY


def test_a_window_below_five_nights_still_waits_for_five():
    previous = [night(run(100)) for _ in range(4)]
    judged = analyse(night(run(50)), previous, threshold_pct=5, history_nights=3)

    assert judged.window == 5
    assert judged.status == NOT_ENOUGH
    assert judged.summary == "not enough history: 4 of 5 nights needed to judge"


def test_the_analysis_flags_the_cells_that_regressed_and_keeps_the_rule():
    def matrix(one, four):
        return night(run(one, threads=1), run(four, threads=4))

    previous = [matrix(100, 400) for _ in range(7)]
    judged = analyse(matrix(100, 300), previous, threshold_pct=5, history_nights=7)

    assert [c.label for c in judged.flagged] == ["threads=4"]
    assert judged.status == REGRESSION
    assert judged.summary == "1 of 2 cells regressed beyond the noise"
    stored = judged.to_dict()
    assert stored["flagged"] == ["threads=4"]
    assert stored["rule"]["threshold_pct"] == 5 and stored["rule"]["window"] == 7
    assert "1.4826" in stored["rule"]["text"]
    four = next(c for c in stored["cells"] if c["threads"] == 4)
    assert four["verdict"] == REGRESSION and four["flagged"]
    assert (
        four["checks"][0]["text"] == "tps 300.0 vs baseline 400.0 (\u221225 %), noise \u00b10.0 %"
    )
    assert four["checks"][1]["verdict"] == STEADY


def test_an_improving_night_is_reported_as_such_without_a_flag():
    previous = [night(run(100)) for _ in range(5)]
    judged = analyse(night(run(150)), previous, threshold_pct=5, history_nights=7)

    assert judged.status == IMPROVEMENT and judged.flagged == []


def test_a_night_that_measured_nothing_has_no_figure():
    judged = analyse({}, [], threshold_pct=5, history_nights=7)

    assert judged.status == NO_FIGURE and judged.summary == "no figure to judge"


# --- numbers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (8210.4, "", "8,210"),
        (194.56, "", "194.6"),
        (3.456, "ms", "3.46 ms"),
        (12.0, "ms", "12.0 ms"),
    ],
)
def test_figures_read_as_in_a_report(value, unit, text):
    assert figure(value, unit) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (-18.3, "\u221218 %"),
        (2.44, "+2.4 %"),
        (-0.04, "\u00b10.0 %"),
        (0, "\u00b10.0 %"),
        (150, "+150 %"),
        (None, ""),
    ],
)
def test_percentages_carry_their_sign(value, text):
    assert signed_pct(value) == text


def test_the_rule_needs_five_nights_and_three_noises():
    assert regressions.MIN_NIGHTS == 5
    assert regressions.NOISE_SIGMAS == 3


def test_a_targets_axis_keeps_a_history_per_target_and_cell():
    other = {**TARGET, "name": "db-2", "host": "10.0.0.6", "id": 2}
    first = {**TARGET, "id": 1}

    def on(target, tps_value):
        key = f'{{"options":{{}},"settings":{{}},"target":{target["id"]},"threads":1}}'
        return RunResult(
            cell_key=key,
            threads=1,
            settings={},
            options={"time": 60, "threads": 1},
            status="done",
            summary={"tps": tps_value},
            target=target,
        )

    cells = night(on(first, 100), on(other, 50), on(first, 110), on(other, 60))

    by_label = {cell.label: cell for cell in cells.values()}
    assert sorted(by_label) == ["threads=1 target=db-1", "threads=1 target=db-2"]
    assert by_label["threads=1 target=db-1"].throughput == 105
    assert by_label["threads=1 target=db-2"].throughput == 55
    # The first target's cells keep the identity they had when the plan had it alone.
    assert only(night(run(100))).identity == by_label["threads=1 target=db-1"].identity
