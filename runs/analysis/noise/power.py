"""What a comparison that found nothing could have found: the smallest throughput ratio
Welch's test on the logs (verdicts.py) would call significant 80 % of the time with these
repeats at this noise, and how many repeats a side would resolve the ratio measured.

"No significant difference" alone reads as "no difference"; with 3 repeats on a loaded
machine it often means "a difference under 2.8x would go unseen". The figure uses the
noise of the two samples (their log variances) and the t distribution of Welch's degrees
of freedom: the detectable log ratio is the shift of the non-central t whose chance of
passing the test's critical value is the power, times the standard error.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from scipy import optimize, special

ALPHA = 0.05
POWER = 0.8
MAX_REPEATS = 100  # beyond this, "more than 100 repeats": another test is needed
FLOOR = 1.02  # a measured ratio closer to 1 than this: resolve 2 %, not 0.1 %


@dataclass(frozen=True)
class Power:
    repeats: tuple[int, int]  # the repeats a side: base, other
    detectable: float  # the smallest ratio (>= 1) found 80 % of the time
    target: float  # the ratio to resolve: the one measured, at least FLOOR
    repeats_needed: int | None  # a side, to resolve the target; None: over MAX_REPEATS

    @property
    def text(self) -> str:
        """`with 3 repeats at this noise, a difference under 2.8x would go unseen;
        `repeats: auto` or 9 repeats would resolve 1.5x`."""
        n = self.repeats[0] if self.repeats[0] == self.repeats[1] else min(self.repeats)
        said = (
            f"with {n} repeats at this noise, a difference under {_times(self.detectable)} "
            "would go unseen"
        )
        if self.repeats_needed is None:
            return f"{said}; more than {MAX_REPEATS} repeats would be needed to resolve " \
                   f"{_times(self.target)}"  # fmt: skip
        if self.repeats_needed <= n:
            return said
        return (
            f"{said}; `repeats: auto` or {self.repeats_needed} repeats would resolve "
            f"{_times(self.target)}"
        )


@lru_cache(maxsize=4096)
def detectable(var_base: float, var_other: float, n_base: int, n_other: int) -> float:
    """The smallest ratio (>= 1) that a two-sided Welch test at ALPHA finds with POWER, for
    samples of these log variances and sizes (remembered: 60 us each, 80 a compare page of
    20 cells, the same ones again when it is seen again)."""
    a, b = var_base / n_base, var_other / n_other
    error = math.sqrt(a + b)
    if error == 0:
        return 1.0
    # Welch's degrees of freedom are estimated from the samples, and fall short of the
    # pooled n - 2 more often than not: with the pooled ones the figure promised 80 % and
    # Welch's test delivered 70 % at 3 repeats a side (simulated on the recorded noise,
    # tests/analysis/test_power.py); capped at 1.5 x (n - 1) it delivers 79-83 % from 3 to
    # 10 repeats
    df = (a + b) ** 2 / (a**2 / max(n_base - 1, 1) + b**2 / max(n_other - 1, 1))
    df = min(df, max(min(n_base, n_other) - 1, 1) * 1.5)
    # scipy.special's distribution functions, not scipy.stats' (t.ppf, nct.sf): the same
    # values to 1e-14, without 0.1 ms of argument checks a call (a compare page of 20
    # cells made 700 calls: 0.5 s of its CPU)
    critical = float(special.stdtrit(df, 1 - ALPHA / 2))

    def short_of_power(shift: float) -> float:
        # the chance of passing the critical value, less POWER (the far tail is nothing)
        return 1.0 - float(special.nctdtr(df, shift, critical)) - POWER

    shift = optimize.brentq(short_of_power, 0.0, 20.0)
    return math.exp(float(shift) * error)


def power(base: Sequence[float], other: Sequence[float], ratio: float | None) -> Power | None:
    """The power of the comparison of two samples of positive throughputs (2 or more a
    side); None when it cannot be said."""
    if min(len(base), len(other)) < 2 or min(*base, *other) <= 0:
        return None
    var_base = statistics.variance([math.log(v) for v in base])
    var_other = statistics.variance([math.log(v) for v in other])
    return of_spread(var_base, var_other, len(base), len(other), ratio)


def of_spread(
    var_base: float, var_other: float, n_base: int, n_other: int, ratio: float | None
) -> Power | None:
    """The same from the two sides' log variances and sizes (as a verdict keeps them)."""
    if min(n_base, n_other) < 2:
        return None
    found = detectable(var_base, var_other, n_base, n_other)
    folded = max(ratio or 1.0, 1 / (ratio or 1.0), FLOOR)
    needed = _needed(var_base, var_other, folded, max(n_base, n_other))
    return Power((n_base, n_other), found, folded, needed)


def _needed(var_base: float, var_other: float, target: float, start: int) -> int | None:
    """The fewest repeats a side (from `start`) that resolve `target`: the detectable
    ratio falls as the repeats grow, so search from the normal approximation's guess,
    which is within a repeat or two of it (3 or 4 detectable ratios a verdict instead of
    the 8 of a bisection over `start`..MAX_REPEATS; the same answer)."""

    def resolves(n: int) -> bool:
        return detectable(var_base, var_other, n, n) <= target

    if start >= MAX_REPEATS:
        return start if resolves(MAX_REPEATS) else None
    guess = min(max(start, _guess(var_base + var_other, target)), MAX_REPEATS)
    if resolves(guess):
        low, high = _widened_down(resolves, guess, start)
    else:
        found = _widened_up(resolves, guess)
        if found is None:
            return None
        low, high = found
    while low < high:  # resolves(high); low - 1 does not, or is below start
        middle = (low + high) // 2
        if resolves(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _guess(variance_sum: float, target: float) -> int:
    """The repeats a side of the normal approximation (the t distribution asks a few more)."""
    z = 1.959964 + 0.841621  # the quantiles of 1 - ALPHA / 2 and of POWER
    return math.ceil(z * z * variance_sum / math.log(target) ** 2)


def _widened_down(resolves: Callable[[int], bool], high: int, start: int) -> tuple[int, int]:
    """(low, high): the fewest repeats that resolve are in low..high (high resolves)."""
    stride = 1
    while high - stride >= start:
        if not resolves(high - stride):
            return high - stride + 1, high
        high, stride = high - stride, stride * 2
    return start, high


def _widened_up(resolves: Callable[[int], bool], low: int) -> tuple[int, int] | None:
    """(low, high) as _widened_down, from a `low` that does not resolve; None when even
    MAX_REPEATS does not."""
    stride = 1
    while low < MAX_REPEATS:
        above = min(low + stride, MAX_REPEATS)
        if resolves(above):
            return low + 1, above
        low, stride = above, stride * 2
    return None


def _times(ratio: float) -> str:
    if ratio >= 1.1:
        return f"{ratio:.0f}\u00d7" if ratio >= 10 else f"{ratio:.1f}\u00d7"
    return f"{(ratio - 1) * 100:.1f} %"
