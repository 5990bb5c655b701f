"""The nightly check (runs/analysis/nightly/check.py): a cell is alerted on a new step in the
slower direction, at least the plan's threshold, not on one night off the band."""

from __future__ import annotations

import pytest

from runs.analysis.nightly import check as nightly
from runs.analysis.nightly import regressions
from runs.analysis.nightly.check import analyse
from runs.analysis.nightly.regressions import IMPROVEMENT, NOT_ENOUGH, REGRESSION
from tests.analysis.nightly.test_regressions import night, run

# --- the alert: a new slower step --------------------------------------------------------------

# Nights that spread by about 2 %: 3 x noise is above the plan's 5 %.
NOISY = [1000, 1025, 978, 1012, 985, 1020, 990, 1008, 975, 1022, 995, 1015, 982, 1005, 1010]
QUIET = [1000, 1012, 991, 1005, 997, 1008, 994, 1003, 999, 1010, 988, 1002, 1006, 996, 1001]


def nights_of(values, latency=2.0):
    """Nights of one cell, most recent first (as analyse reads them), from oldest-first tps."""
    return [night(run(v, latency=latency)) for v in reversed(values)]


def check(tonight, before, *, threshold=5.0, seen=None):
    ids = list(range(100 + len(before), 99, -1))  # tonight's batch first, as the service gives
    seen = seen if seen is not None else nightly.Seen(batches=ids)
    judged = analyse(
        night(run(tonight)),
        nights_of(before),
        threshold_pct=threshold,
        history_nights=7,
        seen=seen,
    )
    return judged, judged.cells[0]


def test_a_step_at_tonight_is_new_and_alerted():
    judged, cell = check(800, QUIET)

    (step,) = [s for s in cell.steps if s["metric"] == "throughput"]
    assert step["new"] and step["alert"] and step["nights_ago"] == 0
    assert step["batch"] == 100 + len(QUIET)
    assert step["direction"] == "slower" and step["change_pct"] == pytest.approx(-20, abs=0.5)
    assert step["text"].startswith("tps stepped slower: 1,001 to 800.0 (\u221220 %, 95 % interval")
    assert cell.flagged and cell.verdict == REGRESSION and judged.status == REGRESSION
    assert step["text"] in cell.flags


def test_a_step_the_previous_check_saw_is_not_alerted_again():
    _, first = check(800, QUIET)  # the night of the step: alerted
    stored = first.to_dict()["steps"]
    assert first.flagged and stored[0]["batch"] == 100 + len(QUIET)

    before = [*QUIET, 800]
    ids = list(range(100 + len(before), 99, -1))
    seen = nightly.Seen(batches=ids, steps={first.identity: stored})
    _, cell = check(795, before, seen=seen)  # the night after

    (step,) = [s for s in cell.steps if s["metric"] == "throughput"]
    assert step["batch"] == 100 + len(QUIET) and step["nights_ago"] == 1
    assert not step["new"] and not step["alert"] and not cell.flagged


def test_a_step_the_previous_check_had_not_seen_is_new():
    before = [*QUIET, 800, 805, 798]
    ids = list(range(100 + len(before), 99, -1))
    _, cell = check(802, before, seen=nightly.Seen(batches=ids, steps={}))

    (step,) = [s for s in cell.steps if s["metric"] == "throughput"]
    assert step["nights_ago"] == 3 and step["new"] and step["alert"] and cell.flagged


def test_without_steps_recorded_before_only_tonights_step_is_new():
    before = [*QUIET, 800, 805, 798]
    _, cell = check(802, before)  # Seen(steps=None): the first check to look for steps

    (step,) = [s for s in cell.steps if s["metric"] == "throughput"]
    assert not step["new"] and not cell.flagged
    # Tonight is still off the band of the nights before the step: shown, not alerted.
    assert cell.verdict == regressions.OUTLIER


def test_one_night_off_the_band_without_a_step_is_shown_not_alerted():
    # 8 % down on nights that spread by 2 % is beyond the band (3 x noise), but one such
    # night is no step at p < 1e-4.
    judged, cell = check(920, NOISY)

    assert cell.checks[0].verdict == REGRESSION  # the band says so
    assert [s for s in cell.steps if s["metric"] == "throughput"] == []
    assert not cell.flagged and cell.flags == []
    assert cell.verdict == regressions.OUTLIER and judged.status == regressions.OUTLIER
    assert judged.summary == "1 of 1 cells one night off the band, with no new step: no alert"


def test_a_new_step_smaller_than_the_plans_threshold_is_not_alerted():
    # The size is relative to the level before the step, as the band's change is.
    _, cell = check(800, QUIET, threshold=21)

    (step,) = [s for s in cell.steps if s["metric"] == "throughput"]
    assert step["new"] and not step["alert"] and not cell.flagged


def test_a_faster_step_is_never_alerted():
    judged, cell = check(1300, QUIET)

    (step,) = [s for s in cell.steps if s["metric"] == "throughput"]
    assert step["direction"] == "faster" and step["new"] and not step["alert"]
    assert judged.status == IMPROVEMENT


def test_no_step_is_looked_for_before_five_nights():
    _, cell = check(500, QUIET[:4])

    assert cell.steps == [] and not cell.flagged and cell.verdict == NOT_ENOUGH
