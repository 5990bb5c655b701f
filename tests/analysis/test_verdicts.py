# ruff: noqa: RUF001  (the times sign and dashes are what people read in verdicts)
"""Verdicts on recorded runs: Welch's test (scipy) on the logs of the repeats, its 95 %
interval of the ratio, the interval-sample answer for two single runs, and the words."""

from __future__ import annotations

import math
from typing import Any

import pytest

from runs.analysis.noise import stats, verdicts
from runs.analysis.noise.verdicts import FASTER, INTERVALS, NO_RATIO, REPEATS, SAME, SLOWER, TOO_FEW
from tests.analysis.recorded import figures, insert, insert_cell


def compare(base, other) -> Any:
    return verdicts.compare_runs(base, other)


def welch(base, other) -> Any:
    return verdicts.welch(base, other)


def floats(text):
    return [float(x) for x in text.split()]


# Two examples of the Wikipedia article "Welch's t-test" with the p it publishes. The
# verdicts test the logs of the throughputs: fed the exponentials of these samples, they
# test the samples themselves, and must give the published p.
WIKIPEDIA = [
    (
        floats("27.5 21.0 19.0 23.6 17.0 17.9 16.9 20.1 21.9 22.6 23.1 19.6 19.0 21.7 21.4"),
        floats("27.1 22.0 20.8 23.4 23.4 23.5 25.8 22.0 24.8 20.2 21.9 22.1 22.9 20.5 24.4"),
        0.021,
    ),
    (
        floats("17.2 20.9 22.6 18.1 21.7 21.4 23.5 24.2 14.7 21.8"),
        floats(
            "21.5 22.8 21.0 23.0 21.6 23.6 22.5 20.7 23.4 21.8"
            " 20.7 21.7 21.5 22.5 23.6 21.5 22.5 23.5 21.5 21.8"
        ),
        0.149,
    ),
]


@pytest.mark.parametrize(("a", "b", "published_p"), WIKIPEDIA)
def test_welch_on_the_logs_gives_the_published_p(a, b, published_p):
    verdict = welch([math.exp(v) for v in a], [math.exp(v) for v in b])
    assert verdict.p_value == pytest.approx(published_p, abs=0.001)
    # the interval of the ratio is the interval of the difference of the means, exponentiated
    assert math.log(verdict.ratio) == pytest.approx(sum(b) / len(b) - sum(a) / len(a))


def test_flush_0_against_flush_1_is_faster_with_its_interval():
    verdict = compare(insert_cell(1, 1), insert_cell(0, 1))

    assert verdict is not None
    assert (verdict.verdict, verdict.basis, verdict.n_base, verdict.n_other) == (
        FASTER, REPEATS, 3, 3,
    )  # fmt: skip
    assert 1 < verdict.low < verdict.ratio < verdict.high
    assert verdict.p_value < 0.05
    assert verdicts.sentence("flush=0", "flush=1", 1, verdict) == (
        f"flush=0 is {verdict.ratio:.1f}× faster than flush=1 at 1 thread "
        f"(95 % CI {verdict.low:.1f}–{verdict.high:.0f}×, 3 repeats each)"
    )


def test_the_other_way_round_it_is_slower_by_the_same_factor():
    faster = compare(insert_cell(1, 4), insert_cell(0, 4))
    slower = compare(insert_cell(0, 4), insert_cell(1, 4))

    assert slower.verdict == SLOWER and faster.verdict == FASTER
    assert slower.ratio == pytest.approx(1 / faster.ratio)
    assert slower.difference == faster.difference.replace("faster", "slower")
    assert slower.interval == faster.interval


def test_a_difference_inside_the_noise_is_no_significant_difference():
    # flush=0 at 2 and at 4 threads: close, and the repeats spread widely
    verdict = compare(insert_cell(0, 2), insert_cell(0, 4))

    assert verdict.verdict == SAME
    assert verdict.low < 1 < verdict.high
    assert verdict.difference == verdict.interval
    assert verdict.interval.startswith("−") and " to +" in verdict.interval
    assert verdicts.sentence("4 thr", "2 thr", 1, verdict).startswith(
        "no significant difference between 4 thr and 2 thr at 1 thread (95 % CI −"
    )


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize(("base", "other"), [(0, 1), (1, 0), (0, 0), (1, 1)])
def test_a_verdict_never_disagrees_with_its_interval(threads, base, other):
    if base == other:
        a, b = insert_cell(base, threads), insert_cell(other, 4 if threads != 4 else 2)
    else:
        a, b = insert_cell(base, threads), insert_cell(other, threads)
    verdict = compare(a, b)
    assert verdict.significant == (verdict.low > 1 or verdict.high < 1)


def test_two_repeats_are_too_few_and_say_how_many_are_needed():
    verdict = compare(insert_cell(1, 1)[:2], insert_cell(0, 1)[:2])

    assert verdict.verdict == TOO_FEW
    assert verdict.text == "too few repeats (n=2; 3 needed)"
    assert verdict.low is None and verdict.p_value is None
    assert verdict.ratio > 1  # the point estimate is still shown
    assert verdicts.sentence("flush=0", "flush=1", 2, verdict) == (
        "flush=0 against flush=1 at 2 threads: too few repeats (n=2; 3 needed)"
    )


def test_two_single_runs_are_compared_on_their_interval_samples_with_a_caveat():
    # The same cell twice, 12 s each, on a busy machine: within each run the intervals
    # agree, between the runs they do not. The answer says what it measured.
    a = figures("point_long_a", threads=1)
    b = figures("point_long_b", threads=1)
    assert len(a.summary["interval_batch_means"]) == 3  # √12 batches of 4 seconds

    verdict = compare([a], [b])

    assert verdict.basis == INTERVALS and verdict.verdict == FASTER
    assert verdict.low > 1
    assert "not between runs" in verdict.caveat
    assert "one run each, from its interval samples" in verdicts.sentence("b", "a", 1, verdict)


def test_single_runs_too_short_for_their_intervals_are_too_few():
    verdict = compare([insert(1, 1, 1)], [insert(0, 1, 1)])

    assert verdict.text == "too few repeats (n=1; 3 needed)"
    assert "too short" in verdict.caveat and verdict.ratio > 1


def test_failed_and_unfinished_runs_do_not_count():
    a = insert_cell(1, 1)
    failed = figures("insert_f0_t1_r1", threads=1, status="failed")
    assert compare(a, [failed]) is None
    queued = figures("insert_f0_t1_r1", threads=1, status="queued")
    assert compare(a, [*insert_cell(0, 1), queued]).n_other == 3


def test_constant_and_zero_throughputs():
    same = welch([5.0, 5.0, 5.0], [5.0, 5.0, 5.0])
    assert (same.verdict, same.ratio, same.p_value) == (SAME, 1.0, 1.0)
    double = welch([5.0, 5.0, 5.0], [10.0, 10.0, 10.0])
    assert double.verdict == FASTER
    assert double.low == double.high == pytest.approx(2.0)
    assert welch([0.0, 1.0, 2.0], [1.0, 2.0, 3.0]).verdict == NO_RATIO


def test_batch_means_take_square_root_many_batches():
    assert stats.batch_means([1.0] * 3) == [1.0]
    assert stats.batch_means([float(i) for i in range(10)]) == [1.0, 4.0, 7.5]
    assert len(stats.batch_means([1.0] * 10_000)) == stats.MAX_BATCHES
    assert stats.batch_means([]) == []


def test_lag1_autocorrelation_sees_a_trend_and_an_alternation():
    trend = stats.lag1_autocorrelation([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    alternation = stats.lag1_autocorrelation([1.0, 3.0, 1.0, 3.0, 1.0, 3.0])
    assert trend is not None and trend > 0.4
    assert alternation is not None and alternation < -0.5
    assert stats.lag1_autocorrelation([2.0, 2.0, 2.0]) is None


@pytest.mark.parametrize(
    ("ratio", "text"),
    [(2.2, "2.2×"), (0.5, "2.0×"), (1.043, "4.3 %"), (0.96, "4.0 %"), (12.4, "12×")],
)
def test_magnitudes_read_as_people_say_them(ratio, text):
    assert verdicts.magnitude(ratio) == text


@pytest.mark.parametrize(
    ("base", "other"),
    [
        ([812.4, 809.9, 815.2], [902.1, 899.4, 905.0, 901.7]),  # faster, 3 against 4
        ([812.4, 809.9], [812.0, 811.1]),  # the same
        ([100.0, 100.0, 100.0], [98.0, 99.5, 97.1]),  # no spread on one side
        ([5.1, 9.8, 2.2, 7.7, 4.4], [5.0, 5.1]),  # a wide side against a narrow one
    ],
)
def test_welchs_test_is_scipys_ttest_ind_without_its_wrapper(base, other):
    from scipy import stats

    logs = [math.log(v) for v in base], [math.log(v) for v in other]
    expected = stats.ttest_ind(logs[1], logs[0], equal_var=False)
    interval = expected.confidence_interval(verdicts.CONFIDENCE)

    verdict = verdicts.welch(base, other)

    assert verdict.p_value == pytest.approx(float(expected.pvalue), rel=1e-9, abs=1e-15)
    assert verdict.low == pytest.approx(math.exp(float(interval.low)), rel=1e-9)
    assert verdict.high == pytest.approx(math.exp(float(interval.high)), rel=1e-9)
