"""Statistics: spread, Welch's t-test, noise, chart helpers."""

import math

import pytest

from runs.analysis.stats import (
    HIGHER,
    LOWER,
    NO_DIFFERENCE,
    NOT_ENOUGH,
    cdf_from_histogram,
    compare,
    describe,
    downsample_keep_extremes,
    median_abs_deviation,
    percentile_from_histogram,
    regularized_incomplete_beta,
    robust_noise,
    steady_state,
    t_two_sided_p,
    welch_t_test,
)


# The three examples of the Wikipedia article "Welch's t-test", with the figures it
# publishes: t, degrees of freedom, two-sided p.
def floats(text):
    return [float(x) for x in text.split()]


WIKIPEDIA_EXAMPLES = [
    (
        floats("27.5 21.0 19.0 23.6 17.0 17.9 16.9 20.1 21.9 22.6 23.1 19.6 19.0 21.7 21.4"),
        floats("27.1 22.0 20.8 23.4 23.4 23.5 25.8 22.0 24.8 20.2 21.9 22.1 22.9 20.5 24.4"),
        (-2.46, 24.9, 0.021),
    ),
    (
        floats("17.2 20.9 22.6 18.1 21.7 21.4 23.5 24.2 14.7 21.8"),
        floats(
            "21.5 22.8 21.0 23.0 21.6 23.6 22.5 20.7 23.4 21.8"
            " 20.7 21.7 21.5 22.5 23.6 21.5 22.5 23.5 21.5 21.8"
        ),
        (-1.57, 9.9, 0.149),
    ),
    (
        floats("19.8 20.4 19.6 17.8 18.5 18.9 18.3 18.9 19.5 22.0"),
        floats(
            "28.2 26.6 20.1 23.3 25.2 22.1 17.7 27.6 20.6 13.7"
            " 23.2 17.5 20.6 18.0 23.9 21.6 24.3 20.4 23.9 13.3"
        ),
        (-2.22, 24.5, 0.036),
    ),
]

# A real latency histogram: sysbench cpu, 300 events, --histogram --percentile=99,
# which reported "99th percentile: 0.26".
CPU_HISTOGRAM = [
    (0.147, 6),
    (0.149, 11),
    (0.152, 53),
    (0.155, 138),
    (0.158, 49),
    (0.160, 11),
    (0.163, 6),
    (0.166, 2),
    (0.203, 1),
    (0.206, 2),
    (0.210, 2),
    (0.218, 2),
    (0.222, 4),
    (0.226, 2),
    (0.234, 3),
    (0.238, 2),
    (0.247, 1),
    (0.261, 3),
    (0.291, 1),
    (0.336, 1),
]


# --- describe -----------------------------------------------------------------------------


def test_describe_reports_the_spread():
    spread = describe([10.0, 12.0, 14.0, 16.0, 18.0])
    assert spread.n == 5
    assert spread.mean == 14.0
    assert spread.median == 14.0
    assert spread.stddev == pytest.approx(math.sqrt(10))  # sample: divides by n - 1
    assert spread.cv == pytest.approx(0.225877, abs=1e-6)
    assert (spread.min, spread.max) == (10.0, 18.0)


def test_describe_leaves_undefined_figures_empty():
    one = describe([250.0])
    assert (one.n, one.mean, one.stddev, one.cv) == (1, 250.0, None, None)
    assert describe([-1.0, 1.0]).cv is None  # mean 0
    with pytest.raises(ValueError, match="at least one value"):
        describe([])


def test_steady_state_drops_the_samples_of_the_warmup():
    samples = [(3.0, 100.0), (6.0, 180.0), (9.0, 200.0), (12.0, 205.0)]
    assert steady_state(samples, warmup_s=6) == [200.0, 205.0]
    assert steady_state(samples, warmup_s=0) == [100.0, 180.0, 200.0, 205.0]


# --- Student's t and Welch ----------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "published"), WIKIPEDIA_EXAMPLES)
def test_welch_matches_published_example(a, b, published):
    t, df, p = published
    result = welch_t_test(a, b)
    assert result.t == pytest.approx(t, abs=0.01)
    assert result.df == pytest.approx(df, abs=0.1)
    assert result.p_value == pytest.approx(p, abs=0.001)


# scipy.stats.ttest_ind(a, b, equal_var=False) with scipy 1.17, for the same examples
SCIPY_REFERENCE = [
    (-2.455356398286006, 24.988529290231416, 0.021378001462866992),
    (-1.5654335235985037, 9.904741248650831, 0.14884169660532817),
    (-2.225512039969852, 24.524634944257343, 0.035484530830010394),
]


@pytest.mark.parametrize(
    ("example", "reference"), list(zip(WIKIPEDIA_EXAMPLES, SCIPY_REFERENCE, strict=True))
)
def test_welch_matches_reference_values_to_many_digits(example, reference):
    a, b, _ = example
    t, df, p = reference
    result = welch_t_test(a, b)
    assert result.t == pytest.approx(t, abs=1e-12)
    assert result.df == pytest.approx(df, abs=1e-9)
    assert result.p_value == pytest.approx(p, abs=1e-12)


@pytest.mark.parametrize("t", [0.1, 0.5, 1.0, 2.0, 6.3, 40.0])
def test_t_distribution_matches_its_closed_forms(t):
    # df = 1 is the Cauchy distribution, df = 2 has an algebraic form.
    assert t_two_sided_p(t, 1) == pytest.approx(1 - 2 / math.pi * math.atan(t), abs=1e-13)
    assert t_two_sided_p(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t), abs=1e-13)
    assert t_two_sided_p(-t, 2) == t_two_sided_p(t, 2)


def test_t_distribution_matches_the_critical_values_of_t_tables():
    # two-sided 5 % critical values, as printed in t tables (3 decimals)
    for df, critical in [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042)]:
        assert t_two_sided_p(critical, df) == pytest.approx(0.05, abs=1e-4)
    # with very many degrees of freedom it becomes the normal distribution
    assert t_two_sided_p(1.959963984540054, 1e6) == pytest.approx(0.05, abs=1e-6)
    assert t_two_sided_p(0.0, 7) == 1.0
    assert t_two_sided_p(math.inf, 7) == 0.0


def test_incomplete_beta_matches_known_identities():
    assert regularized_incomplete_beta(1, 1, 0.3) == pytest.approx(0.3, abs=1e-15)
    assert regularized_incomplete_beta(3, 1, 0.4) == pytest.approx(0.4**3, abs=1e-15)
    assert regularized_incomplete_beta(1, 4, 0.2) == pytest.approx(1 - 0.8**4, abs=1e-15)
    assert regularized_incomplete_beta(7.5, 7.5, 0.5) == pytest.approx(0.5, abs=1e-15)
    assert regularized_incomplete_beta(2, 3, 0.0) == 0.0
    assert regularized_incomplete_beta(2, 3, 1.0) == 1.0


def test_welch_with_constant_sides():
    assert welch_t_test([5.0, 5.0], [5.0, 5.0, 5.0]).p_value == 1.0
    assert welch_t_test([5.0, 5.0], [6.0, 6.0]).p_value == 0.0
    with pytest.raises(ValueError, match="at least 2 values"):
        welch_t_test([1.0], [1.0, 2.0])


# --- compare ------------------------------------------------------------------------------


def test_compare_needs_three_repeats_on_each_side():
    verdict = compare([100.0, 102.0], [150.0, 151.0, 149.0])
    assert verdict.verdict == NOT_ENOUGH == "not enough repeats to tell"
    assert verdict.p_value is None
    assert verdict.diff_percent == pytest.approx(48.5148515, abs=1e-6)


def test_compare_sees_no_difference_inside_the_noise():
    verdict = compare([100.0, 110.0, 90.0], [101.0, 111.0, 93.0])
    assert verdict.verdict == NO_DIFFERENCE == "no significant difference"
    assert verdict.diff_percent == pytest.approx(1.6666667, abs=1e-6)
    assert verdict.p_value == pytest.approx(0.8408466559209007, abs=1e-12)  # scipy


def test_compare_says_higher_or_lower_for_b_against_a():
    a, b = [100.0, 101.0, 99.0], [110.0, 111.0, 109.0]
    higher = compare(a, b)
    assert higher.verdict == HIGHER == "significantly higher"
    assert higher.diff_percent == pytest.approx(10.0)
    assert higher.p_value == pytest.approx(0.0002552167494419268, abs=1e-15)  # scipy
    lower = compare(b, a)
    assert lower.verdict == LOWER == "significantly lower"
    assert lower.diff_percent == pytest.approx(-9.0909091, abs=1e-6)


def test_compare_without_a_baseline_mean_has_no_percentage():
    assert compare([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]).diff_percent is None


# --- noise --------------------------------------------------------------------------------


def test_mad_ignores_one_wild_run():
    values = [100.0, 102.0, 98.0, 101.0, 400.0]
    assert median_abs_deviation(values) == 1.0  # |x - 101|: 1, 1, 3, 0, 299
    assert robust_noise(values) == pytest.approx(1.4826)
    assert robust_noise([10.0, 12.0, 14.0, 16.0, 18.0]) == pytest.approx(2 * 1.4826)


# --- charts -------------------------------------------------------------------------------


def test_downsampling_keeps_peaks_and_troughs():
    points = [(float(i), 100.0 + (i % 7)) for i in range(10_000)]
    points[4321] = (4321.0, 950.0)  # a spike
    points[8765] = (8765.0, 3.0)  # a stall
    kept = downsample_keep_extremes(points, 200)
    assert len(kept) <= 200
    assert (4321.0, 950.0) in kept
    assert (8765.0, 3.0) in kept
    assert kept[0] == (0.0, 100.0)
    assert kept[-1] == points[-1]
    assert [x for x, _ in kept] == sorted(x for x, _ in kept)


def test_short_series_are_left_alone():
    points = [(1.0, 5.0), (2.0, 7.0), (3.0, 6.0)]
    assert downsample_keep_extremes(points, 4) == points
    with pytest.raises(ValueError):
        downsample_keep_extremes(points, 3)


def test_percentile_from_histogram_agrees_with_sysbench():
    assert percentile_from_histogram(CPU_HISTOGRAM, 99) == 0.261  # sysbench printed 0.26
    assert percentile_from_histogram(CPU_HISTOGRAM, 95) == 0.222
    assert percentile_from_histogram(CPU_HISTOGRAM, 50) == 0.155
    assert percentile_from_histogram(CPU_HISTOGRAM, 100) == 0.336
    assert percentile_from_histogram(list(reversed(CPU_HISTOGRAM)), 99) == 0.261


def test_percentile_of_an_empty_histogram_is_none():
    assert percentile_from_histogram([], 95) is None
    assert percentile_from_histogram([(1.0, 0)], 95) is None
    with pytest.raises(ValueError):
        percentile_from_histogram(CPU_HISTOGRAM, 101)


def test_cdf_from_histogram():
    rows = [(3.0, 6), (1.0, 2), (2.0, 0)]
    assert cdf_from_histogram(rows) == [(1.0, 0.25), (3.0, 1.0)]
    cdf = cdf_from_histogram(CPU_HISTOGRAM)
    assert cdf[3] == (0.155, 208 / 300)
    assert cdf[-1] == (0.336, 1.0)
    assert cdf_from_histogram([]) == []
