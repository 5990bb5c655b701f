"""Statistics: spread, noise, chart helpers."""

import math
import random
import statistics

import pytest

from runs.analysis.noise.stats import (
    cdf_from_histogram,
    describe,
    downsample_keep_extremes,
    median_abs_deviation,
    percentile_from_histogram,
    robust_noise,
    steady_state,
    variance,
)

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


def test_variance_is_statistics_variance_to_the_last_bit():
    rng = random.Random(39)
    samples = [
        [math.log(rng.uniform(100, 20000)) for _ in range(rng.randint(2, 12))] for _ in range(2000)
    ]
    samples += [
        [rng.gauss(0, 1) * 10.0 ** rng.randint(-30, 30) for _ in range(5)] for _ in range(500)
    ]
    samples += [[6.5 + rng.gauss(0, 1e-12) for _ in range(4)] for _ in range(500)]
    samples += [[0.0, -0.0, 5e-324, 1e-310], [2.5, 2.5, 2.5], [1.0, math.inf], [1.0, math.nan]]
    for values in samples:
        expected, found = statistics.variance(values), variance(values)
        assert found.hex() == expected.hex() or (math.isnan(found) and math.isnan(expected))
    with pytest.raises(statistics.StatisticsError):
        variance([1.0])
