"""The re-run's verdict (runs/analysis/nightly/confirmation.py): an alerted step is confirmed when
the re-run lands on its slower side of the midpoint between the levels before and after,
noise otherwise; the steps come from the nightly check itself on seeded nights."""

from __future__ import annotations

import numpy as np
import pytest

from runs.analysis.nightly import confirmation
from runs.analysis.nightly.confirmation import CONFIRMED, NO_FIGURE, NOISE
from tests.analysis.nightly.test_check import check

QUIET = [1000, 1012, 991, 1005, 997, 1008, 994, 1003, 999, 1010, 988, 1002, 1006, 996, 1001]


@pytest.fixture
def alerted_cell():
    """A cell the nightly check alerted: 15 quiet nights around 1,000 tps, then 900."""
    _, cell = check(900, QUIET)
    assert cell.flagged
    return cell.to_dict()


def test_a_rerun_at_the_new_level_confirms_the_step(alerted_cell):
    judged = confirmation.confirm_cell(alerted_cell, {"throughput": [905.0, 898.0, 910.0]})

    assert judged.verdict == CONFIRMED
    (step,) = judged.steps
    # the levels are geometric means: 900 read back through its logarithm
    assert step.before == pytest.approx(1000.8, abs=1) and step.after == pytest.approx(900)
    assert step.midpoint == pytest.approx((step.before + 900) / 2)
    assert step.low is not None and step.high is not None
    assert step.value == 905.0 and step.repeats == 3 and step.low < 905 < step.high
    assert step.text.startswith("tps re-run 905.0 (\u22129.6 % from 1,001, 3 repeats")
    assert step.text.endswith(": confirmed")


def test_a_rerun_back_at_the_old_level_says_it_was_one_wild_night(alerted_cell):
    judged = confirmation.confirm_cell(alerted_cell, {"throughput": [996.0, 1004.0, 991.0]})

    assert judged.verdict == NOISE
    assert "closer to the nights before it" in judged.steps[0].text
    assert confirmation.alert_verdict([judged]) == NOISE


def test_the_midpoint_decides_a_rerun_between_the_levels(alerted_cell):
    slower = confirmation.confirm_cell(alerted_cell, {"throughput": [940.0] * 3})
    nearer_before = confirmation.confirm_cell(alerted_cell, {"throughput": [960.0] * 3})
    assert (slower.verdict, nearer_before.verdict) == (CONFIRMED, NOISE)


def test_a_latency_step_is_confirmed_upwards():
    step = {"metric": "latency", "name": "p95", "before": 2.0, "after": 3.0, "alert": True}
    assert confirmation.confirm_step(step, [2.9, 3.1, 2.8]).verdict == CONFIRMED
    assert confirmation.confirm_step(step, [2.1, 2.0, 2.2]).verdict == NOISE


def test_a_rerun_that_measured_nothing_says_so(alerted_cell):
    judged = confirmation.confirm_cell(alerted_cell, {})
    assert judged.verdict == NO_FIGURE
    assert judged.steps[0].text == "tps: the re-run measured nothing"
    assert confirmation.alert_verdict([judged]) == NO_FIGURE


def test_one_confirmed_cell_confirms_the_alert(alerted_cell):
    confirmed = confirmation.confirm_cell(alerted_cell, {"throughput": [900.0] * 3})
    noise = confirmation.confirm_cell(alerted_cell, {"throughput": [1000.0] * 3})
    assert confirmation.alert_verdict([noise, confirmed]) == CONFIRMED
    assert confirmation.alert_verdict([noise, noise]) == NOISE


def test_repeats_auto_aims_at_a_quarter_of_the_smallest_step():
    steps = [{"change_pct": -8.0}, {"change_pct": -6.0}]
    assert confirmation.target_pct(steps) == 1.5
    assert confirmation.target_pct([{"change_pct": -1.0}]) == confirmation.MIN_TARGET_PCT


def test_on_seeded_noise_a_wild_nights_rerun_is_rarely_taken_for_a_step():
    # A 10 % wild night in 1.5 % Gaussian noise: a re-run drawn from the same noise lands
    # beyond the midpoint (5 %) about once in 3,500 (z = 3.3).
    rng = np.random.default_rng(28)
    step = {"metric": "throughput", "name": "tps", "before": 1000.0, "after": 900.0}
    reruns = 1000 * (1 + 0.015 * rng.standard_normal((2000, 3)))
    verdicts = [confirmation.confirm_step(step, list(r)).verdict for r in reruns]
    assert verdicts.count(CONFIRMED) <= 2
    # And a real 10 % step's re-run is taken for noise as rarely.
    reruns = 900 * (1 + 0.015 * rng.standard_normal((2000, 3)))
    verdicts = [confirmation.confirm_step(step, list(r)).verdict for r in reruns]
    assert verdicts.count(NOISE) <= 2


def test_the_rerun_watches_the_metric_of_the_smallest_alerted_step():
    # issue 37: a night alerted on its p95 was re-run with repeats watching tps.
    p95 = {"metric": "latency", "change_pct": 30.0}
    tps = {"metric": "throughput", "change_pct": -6.0}
    assert confirmation.watched_metric([p95]) == "latency"
    assert confirmation.watched_metric([p95, tps]) == "throughput"
    assert confirmation.watched_metric([{**p95, "change_pct": 4.0}, tps]) == "latency"
    assert confirmation.watched_metric([]) == "throughput"
