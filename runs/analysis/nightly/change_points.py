"""The nights where a cell's figure stepped: change points over its history.

E-divisive with a t-test merge (Apache Otava's `compute_change_points`, the algorithm of
MongoDB's performance CI as Otava publishes it) splits the series where its two sides differ
most and keeps a split only when it is significant (p < MAX_PVALUE) and at least
MIN_MAGNITUDE large. Each step is given with its size in percent of the level before it,
the 95 % interval of that size, and its direction for people: slower or faster, whatever
the metric. The levels are the segments' geometric means (the house's one estimator) and
the interval is Student's t (pooled, as the merge's test) on the logarithms of the nights,
exponentiated: a ratio's interval, so a throughput or a latency never falls by more than
100 % (on a linear scale a noisy level with a deep drop read "-114 % to -84 %").

Otava is installed without its dependencies (its command line pulls cloud and chat
clients); the one module used here needs numpy and scipy only, so it is imported here and
nowhere else. Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from otava.analysis import compute_change_points
from scipy import stats as scipy_stats

# Chosen on seeded replays of 60 noisy nights (bench/change_points_noise.py, docs/nightly.md):
# at 1e-4 and 2 % no replay of pure noise showed a step, and a 5 % step in 1.5 % noise is
# found at its night nine times in ten.
MAX_PVALUE = 1e-4
MIN_MAGNITUDE = 0.02  # a relative change; smaller steps are not reported
WINDOW = 30  # nights in one sliding window of the split step
CONFIDENCE = 0.95

SLOWER = "slower"
FASTER = "faster"


@dataclass(frozen=True)
class Step:
    """A change point: the figure moved from `before` to `after` at night `index`."""

    index: int  # position in the series given of the first night after the step
    before: float  # geometric mean of the nights since the previous step
    after: float  # geometric mean of the nights until the next step
    change_pct: float  # (after - before) / before, in percent
    low_pct: float  # the 95 % interval of change_pct
    high_pct: float
    direction: str  # slower or faster
    pvalue: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_steps(values: Sequence[float | None], *, higher_is_better: bool) -> list[Step]:
    """The steps of a series, oldest first; nights without a figure are skipped and the
    indexes are those of `values`."""
    known = [(i, float(v)) for i, v in enumerate(values) if v is not None and math.isfinite(v)]
    series = [v for _, v in known]
    if len(series) < 3:
        return []
    points, _ = compute_change_points(
        series, window_len=WINDOW, max_pvalue=MAX_PVALUE, min_magnitude=MIN_MAGNITUDE
    )
    points = sorted(points, key=lambda p: int(p.index))
    cuts = [int(p.index) for p in points]
    edges = [0, *cuts, len(series)]
    steps = [
        _step(
            known[cut][0],
            series[edges[n] : cut],
            series[cut : edges[n + 2]],
            float(points[n].stats.pvalue),
            higher_is_better,
        )
        for n, cut in enumerate(cuts)
    ]
    # A level of 0 before the step (a p95 below sysbench's 0.01 ms resolution) has no
    # relative size: such a step is the printout's rounding, not the server's.
    return [s for s in steps if s.before]


def _step(
    index: int, left: list[float], right: list[float], pvalue: float, higher_is_better: bool
) -> Step:
    if min(left) <= 0 or min(right) <= 0:
        # A night of 0 has no logarithm: the arithmetic means and their interval, whose low
        # end is bounded by what a figure that cannot go below 0 can do (-100 %).
        before, after = statistics.fmean(left), statistics.fmean(right)
        scale = 1 / before if before else 0.0
        low, high = ((end * scale) for end in _interval(left, right))
        low = max(low, -1.0)
    else:
        logs = [math.log(v) for v in left], [math.log(v) for v in right]
        before, after = (math.exp(statistics.fmean(side)) for side in logs)
        low, high = (math.expm1(end) for end in _interval(*logs))
    worse = after < before if higher_is_better else after > before
    return Step(
        index=index,
        before=before,
        after=after,
        change_pct=(after / before - 1) * 100 if before else 0.0,
        low_pct=low * 100,
        high_pct=high * 100,
        direction=SLOWER if worse else FASTER,
        pvalue=pvalue,
    )


def _interval(left: list[float], right: list[float]) -> tuple[float, float]:
    """The interval of mean(right) - mean(left), pooled variance as in the merge's t-test."""
    n1, n2 = len(left), len(right)
    diff = statistics.fmean(right) - statistics.fmean(left)
    dof = n1 + n2 - 2
    if dof < 1:
        return diff, diff
    squares = sum((v - statistics.fmean(left)) ** 2 for v in left) + sum(
        (v - statistics.fmean(right)) ** 2 for v in right
    )
    spread = math.sqrt(squares / dof * (1 / n1 + 1 / n2))
    t = float(scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, dof))
    return diff - t * spread, diff + t * spread
