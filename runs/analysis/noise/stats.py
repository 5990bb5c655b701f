"""Statistics for benchmark results: spread, noise, chart helpers.

Benchmark figures vary from run to run, so a single difference between two means says
little; these functions say how much the figures spread. Whether a difference stands out
of that spread is verdicts.py's question (Welch's test, from scipy).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MAD_TO_SIGMA = 1.4826  # MAD x this estimates the standard deviation of normal data
# The one estimator of a cell's throughput over its repeats: the tables' column, their
# "x baseline" (the ratio of two of them) and the verdict's ratio and interval (Welch's
# test on the logs) all read it, so a table never orders two cells one way by throughput
# and the other way by ratio.
ESTIMATOR = "geometric mean of the repeats"


@dataclass(frozen=True)
class Spread:
    n: int
    mean: float
    median: float
    stddev: float | None  # sample standard deviation; None with fewer than 2 values
    cv: float | None  # stddev / mean; None when either is undefined or the mean is 0
    min: float
    max: float


def describe(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("describe() needs at least one value")
    mean = statistics.fmean(values)
    stddev = statistics.stdev(values) if len(values) >= 2 else None
    cv = stddev / mean if stddev is not None and mean != 0 else None
    return Spread(
        n=len(values),
        mean=mean,
        median=statistics.median(values),
        stddev=stddev,
        cv=cv,
        min=min(values),
        max=max(values),
    )


def steady_state(
    samples_tps_with_time: Iterable[tuple[float, float]], warmup_s: float
) -> list[float]:
    """The tps of the samples taken after the warmup, (time_s, tps) pairs in."""
    return [tps for time_s, tps in samples_tps_with_time if time_s > warmup_s]


# --- noise ---------------------------------------------------------------------------------


def median_abs_deviation(values: Sequence[float]) -> float:
    """The median distance from the median: a spread that one wild run cannot inflate."""
    centre = statistics.median(values)
    return statistics.median(abs(v - centre) for v in values)


def robust_noise(values: Sequence[float]) -> float:
    """A standard deviation estimate that ignores outliers (1.4826 x MAD)."""
    return MAD_TO_SIGMA * median_abs_deviation(values)


# --- charts --------------------------------------------------------------------------------


def downsample_keep_extremes(
    points: Sequence[tuple[float, float]], max_points: int
) -> list[tuple[float, float]]:
    """At most max_points of a series sorted by x, keeping its peaks and troughs.

    An average per bucket would flatten exactly the stalls people look for in a long
    run; instead each bucket keeps its lowest and highest point, in x order, and the
    first and last points stay so the chart spans the same time.
    """
    if max_points < 4:
        raise ValueError("max_points must be at least 4")
    if len(points) <= max_points:
        return list(points)
    inner = points[1:-1]
    buckets = (max_points - 2) // 2
    kept: list[tuple[float, float]] = [points[0]]
    for i in range(buckets):
        bucket = inner[i * len(inner) // buckets : (i + 1) * len(inner) // buckets]
        kept += _extremes(bucket)
    kept.append(points[-1])
    return kept


def _extremes(bucket: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    low = min(range(len(bucket)), key=lambda i: bucket[i][1])
    high = max(range(len(bucket)), key=lambda i: bucket[i][1])
    return [bucket[i] for i in sorted({low, high})]


def percentile_from_histogram(rows: Iterable[tuple[float, int]], pct: float) -> float | None:
    """The latency percentile from sysbench's histogram rows (value_ms, count).

    Same rule as sysbench (sb_histogram_snapshot_get_pct): the first bucket at which the
    running count reaches round(total x pct / 100); None for an empty histogram.
    """
    if not 0 <= pct <= 100:
        raise ValueError(f"percentile must be between 0 and 100, not {pct}")
    buckets = _sorted_buckets(rows)
    total = sum(count for _, count in buckets)
    if total == 0:
        return None
    needed = math.floor(total * pct / 100 + 0.5)
    running = 0
    for value, count in buckets:
        running += count
        if running >= needed:
            return value
    return buckets[-1][0]  # unreachable: the running count ends at total >= needed


def cdf_from_histogram(rows: Iterable[tuple[float, int]]) -> list[tuple[float, float]]:
    """(value_ms, share of events at or below it, 0-1) for each non-empty bucket."""
    buckets = _sorted_buckets(rows)
    total = sum(count for _, count in buckets)
    cdf = []
    running = 0
    for value, count in buckets:
        running += count
        cdf.append((value, running / total))
    return cdf


def _sorted_buckets(rows: Iterable[tuple[float, int]]) -> list[tuple[float, int]]:
    return sorted((float(value), int(count)) for value, count in rows if count > 0)


def geometric_ratio(base: Sequence[float], other: Sequence[float]) -> float | None:
    """The ratio of the geometric means, other / base; None without a positive value a side."""
    if not base or not other or min(*base, *other) <= 0:
        return None
    # lists, not generators: fmean counts a generator's items in Python, a list's by len()
    return math.exp(
        statistics.fmean([math.log(v) for v in other])
        - statistics.fmean([math.log(v) for v in base])
    )


def geometric_mean(values: Sequence[float]) -> float | None:
    """The cell's throughput (ESTIMATOR); the arithmetic mean when a value is not positive
    (a throughput of 0 has no logarithm), None without a value."""
    if not values:
        return None
    if min(values) <= 0 or min(values) == max(values):
        return statistics.fmean(values)  # equal values: exactly that value, no rounding
    return math.exp(statistics.fmean([math.log(v) for v in values]))  # a list: as above


def variance(values: Sequence[float]) -> float:
    """The sample variance of floats, statistics.variance's to the last bit in a quarter of
    its time (its Fractions took 40 us for 10 values). Each finite float is an integer over
    a power of two, so over the largest of those powers the sums are exact integers, and
    int / int rounds once, correctly, as statistics' float(Fraction) does."""
    if len(values) < 2 or not all(map(math.isfinite, values)):
        return statistics.variance(values)  # its error, or its NaN and infinities
    ratios = [float(v).as_integer_ratio() for v in values]
    shift = max(d for _, d in ratios).bit_length() - 1  # the largest power: 2 ** shift
    whole = [n << (shift - d.bit_length() + 1) for n, d in ratios]  # each value x 2 ** shift
    count, total = len(whole), sum(whole)
    squares = sum(w * w for w in whole)
    return (count * squares - total * total) / (count * (count - 1) << 2 * shift)


# --- a run's interval series -----------------------------------------------------------

MAX_BATCHES = 30


def batch_means(values: Sequence[float], max_batches: int = MAX_BATCHES) -> list[float]:
    """Means of √n consecutive stretches of a series (at most max_batches): batches long
    enough that their means barely correlate, and enough of them to see the spread."""
    count = min(max_batches, math.isqrt(len(values)))
    return [
        statistics.fmean(values[i * len(values) // count : (i + 1) * len(values) // count])
        for i in range(count)
    ]


def lag1_autocorrelation(values: Sequence[float]) -> float | None:
    if len(values) < 3:
        return None
    mean = statistics.fmean(values)
    denominator = sum((v - mean) ** 2 for v in values)
    if denominator == 0:
        return None
    numerator = sum((a - mean) * (b - mean) for a, b in itertools.pairwise(values))
    return numerator / denominator
