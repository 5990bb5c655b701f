"""Statistics for benchmark results: spread, comparisons, noise, chart helpers.

Benchmark figures vary from run to run, so a single difference between two means says
little; these functions say how much the figures spread and whether a difference stands
out of that spread. Only the standard library: Student's t distribution comes from the
regularized incomplete beta function, computed by its continued fraction.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ALPHA = 0.05
MIN_REPEATS = 3  # below this a t-test has almost no power; say so rather than guess
MAD_TO_SIGMA = 1.4826  # MAD x this estimates the standard deviation of normal data

NOT_ENOUGH = "not enough repeats to tell"
NO_DIFFERENCE = "no significant difference"
HIGHER = "significantly higher"
LOWER = "significantly lower"


@dataclass(frozen=True)
class Spread:
    n: int
    mean: float
    median: float
    stddev: float | None  # sample standard deviation; None with fewer than 2 values
    cv: float | None  # stddev / mean; None when either is undefined or the mean is 0
    min: float
    max: float


@dataclass(frozen=True)
class TTest:
    t: float  # (mean a - mean b) / standard error
    df: float  # Welch-Satterthwaite degrees of freedom
    p_value: float  # two-sided


@dataclass(frozen=True)
class Verdict:
    """How b compares with a (a is the baseline)."""

    diff_percent: float | None  # (mean b - mean a) / mean a x 100; None when mean a is 0
    verdict: str
    p_value: float | None  # None when there are too few repeats to test


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


# --- comparing two sets of repeats --------------------------------------------------------


def welch_t_test(a: Sequence[float], b: Sequence[float]) -> TTest:
    """Welch's t-test: no assumption that both sides vary alike (they rarely do)."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError("a t-test needs at least 2 values on each side")
    mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
    share_a = statistics.variance(a) / len(a)
    share_b = statistics.variance(b) / len(b)
    se2 = share_a + share_b
    if se2 == 0:  # both sides constant: the means either match or differ for sure
        df = float(len(a) + len(b) - 2)
        if mean_a == mean_b:
            return TTest(t=0.0, df=df, p_value=1.0)
        return TTest(t=math.copysign(math.inf, mean_a - mean_b), df=df, p_value=0.0)
    t = (mean_a - mean_b) / math.sqrt(se2)
    df = se2**2 / (share_a**2 / (len(a) - 1) + share_b**2 / (len(b) - 1))
    return TTest(t=t, df=df, p_value=t_two_sided_p(t, df))


def compare(a: Sequence[float], b: Sequence[float], alpha: float = ALPHA) -> Verdict:
    """Whether b (say, the new setting) differs from a (the baseline), in words."""
    mean_a = statistics.fmean(a) if a else math.nan
    diff = None
    if a and b and mean_a != 0:
        diff = (statistics.fmean(b) - mean_a) / mean_a * 100
    if len(a) < MIN_REPEATS or len(b) < MIN_REPEATS:
        return Verdict(diff_percent=diff, verdict=NOT_ENOUGH, p_value=None)
    test = welch_t_test(a, b)
    if test.p_value >= alpha:
        return Verdict(diff_percent=diff, verdict=NO_DIFFERENCE, p_value=test.p_value)
    verdict = HIGHER if test.t < 0 else LOWER  # t < 0: mean a below mean b
    return Verdict(diff_percent=diff, verdict=verdict, p_value=test.p_value)


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if math.isinf(t):
        return 0.0
    t2 = t * t
    p = regularized_incomplete_beta(df / 2, 0.5, df / (df + t2))
    if p < 0.5:
        return p
    # Near p = 1, df / (df + t²) rounds towards 1 and loses a small |t|; its complement
    # t² / (df + t²) keeps it: I_x(a, b) = 1 - I_(1-x)(b, a).
    return 1 - regularized_incomplete_beta(0.5, df / 2, t2 / (df + t2))


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), by the continued fraction of Numerical Recipes (6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The fraction converges fast only below the mean of the distribution; above it,
    # use the symmetry I_x(a, b) = 1 - I_(1-x)(b, a).
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction for I_x(a, b), by the modified Lentz method."""
    tiny = 1e-300  # stands in for a zero denominator
    c, d = 1.0, 1 / _nonzero(1 - (a + b) * x / (a + 1), tiny)
    result = d
    for m in range(1, 10_000):
        for numerator in _fraction_terms(a, b, x, m):
            d = 1 / _nonzero(1 + numerator * d, tiny)
            c = _nonzero(1 + numerator / c, tiny)
            result *= d * c
        if abs(d * c - 1) < 1e-15:
            return result
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def _fraction_terms(a: float, b: float, x: float, m: int) -> tuple[float, float]:
    # The even and the odd coefficient of step m.
    even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
    odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
    return even, odd


def _nonzero(value: float, tiny: float) -> float:
    return value if abs(value) >= tiny else tiny


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
