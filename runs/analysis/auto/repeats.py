"""Repeats auto (the plan's `auto.repeats`): one more repeat of a cell until its comparison
with the baseline's cell is decided, up to a maximum.

A cell's comparison is decided when, at one of its looks (after each repeat from the 3rd
to the maximum), either Welch's test on the logs calls it faster or slower, or the
interval of its ratio lies inside the equivalence margin (±2 % by default: two one-sided
tests). Looking after every repeat and stopping at the first answer would inflate the
false-positive rate (5 % at each of K looks is up to 1 - 0.95^K overall), so each look is
held at 5 % / K: a Bonferroni split of the error over the maximum number of looks, which
keeps the chance of a false "faster" or "slower" for a cell at 5 % whatever the look it
stops at (verified by the A/A replay in tests/analysis/test_auto.py).

Cells without a baseline to be compared with (the baseline's own, a batch of one series)
go on while the 95 % interval of their mean is wider than ±target_pct, as before; the
baseline's cell gets one more repeat whenever a cell compared with it does, so that both
sides of each comparison grow together, interleaved.

A plan's repeats watch throughput; a confirmation re-run of a night alerted on its latency
watches the latency percentile (`metric: latency`): a lower figure is then the better one.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats as scipy_stats

from runs.analysis.auto.cells import CellFigures, half_width_pct
from runs.analysis.auto.settings import RepeatsAuto
from runs.analysis.noise.verdicts import CONFIDENCE, FASTER, MIN_REPEATS, SLOWER

ALPHA = 1 - CONFIDENCE
RULE = "Bonferroni over the looks"
EQUIVALENT = "equivalent"
MAXIMUM = "maximum"
LATENCY = "latency"


def watched(cell: CellFigures, auto: RepeatsAuto) -> tuple[float, ...]:
    """The figures of a cell's repeats that repeats auto watches."""
    return cell.latencies if auto.metric == LATENCY else cell.values


def _of(auto: RepeatsAuto) -> str:
    return " of latency" if auto.metric == LATENCY else ""


def looks(auto: RepeatsAuto) -> int:
    """How many times a cell's comparison may be looked at: after repeats 3 ... max."""
    return max(1, auto.max - MIN_REPEATS + 1)


def look_alpha(auto: RepeatsAuto) -> float:
    return ALPHA / looks(auto)


@dataclass(frozen=True)
class Look:
    """A comparison looked at: decided (FASTER, SLOWER, EQUIVALENT) or not (""), and why."""

    decided: str
    text: str


def look(base: Sequence[float], other: Sequence[float], auto: RepeatsAuto) -> Look | None:
    """The comparison of a cell with the baseline's at this look; None before 3 a side."""
    if min(len(base), len(other)) < MIN_REPEATS or min(*base, *other) <= 0:
        return None
    alpha = look_alpha(auto)
    p_value, low, high = _welch(base, other, alpha)
    ratio = math.exp(statistics.fmean(map(math.log, other)) - statistics.fmean(map(math.log, base)))
    level = f"< {alpha:.3g}, {RULE}: {looks(auto)}"
    if p_value < alpha:
        higher = ratio > 1
        verdict = FASTER if higher != (auto.metric == LATENCY) else SLOWER
        return Look(verdict, f"decided {verdict} (p = {p_value:.2g} {level})")
    margin = auto.margin_pct / 100
    interval = f"{_pct(low)} to {_pct(high)}"
    if low >= 1 - margin and high <= 1 + margin:
        return Look(EQUIVALENT, f"equivalent within ±{auto.margin_pct:g} % ({interval})")
    return Look("", f"undecided (p = {p_value:.2g}, {interval})")


def _welch(
    base: Sequence[float], other: Sequence[float], alpha: float
) -> tuple[float, float, float]:
    """p-value and the ratio's (1 - 2 alpha) interval (the two one-sided tests of
    equivalence at alpha each) from Welch's test on the logs."""
    log_base, log_other = [math.log(v) for v in base], [math.log(v) for v in other]
    if statistics.pvariance(log_base) == 0 and statistics.pvariance(log_other) == 0:
        ratio = math.exp(log_other[0] - log_base[0])
        return (1.0 if ratio == 1 else 0.0), ratio, ratio
    result = scipy_stats.ttest_ind(log_other, log_base, equal_var=False)
    interval = result.confidence_interval(1 - 2 * alpha)
    return float(result.pvalue), math.exp(float(interval.low)), math.exp(float(interval.high))


def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f} %"


def repeat_reason(
    cell: CellFigures, auto: RepeatsAuto, label: str, base: CellFigures | None = None
) -> str | None:
    """Why one more repeat of a cell is due, or None when it is done: its comparison with
    the baseline's cell (`base`) decided, or without one, its mean clear enough."""
    if cell.attempts >= auto.max:
        return None
    if base is not None:
        found = look(watched(base, auto), watched(cell, auto), auto)
        if found is not None and found.decided:
            return None
        why = found.text if found else "fewer than 3 finished repeats a side"
        return f"repeat {cell.attempts + 1} of {label}: against the baseline{_of(auto)}, {why}"
    noise = half_width_pct(watched(cell, auto))
    if noise is None:
        return f"repeat {cell.attempts + 1} of {label}: too few finished repeats to measure noise"
    if noise <= auto.target_pct:
        return None
    return (
        f"repeat {cell.attempts + 1} of {label}: ±{noise:.1f} %{_of(auto)} > target "
        f"±{auto.target_pct:g} %"
    )


def stopped_why(cell: CellFigures, auto: RepeatsAuto, base: CellFigures) -> str:
    """Why a compared cell stopped: `decided faster after 3 repeats (p = ...)`,
    `equivalent within ±2 % after 6 repeats (...)`, `reached the maximum of 10 repeats,
    undecided (...)`."""
    values = watched(cell, auto)
    found = look(watched(base, auto), values, auto)
    after = f"after {len(values)} repeats"
    if found is None:
        return f"too few finished repeats to compare ({len(values)})"
    if found.decided:
        head, _, rest = found.text.partition(" (")
        return f"{head} {after} ({rest}"
    if cell.attempts >= auto.max:
        return f"reached the maximum of {auto.max} repeats, {found.text}"
    return f"{found.text} {after}"


def repeats_conclusion(cell: CellFigures, auto: RepeatsAuto) -> str:
    """`±1.2 % after 3 repeats`, or the honest `still noisy (±6.0 %) after 5 repeats`."""
    values = watched(cell, auto)
    noise = half_width_pct(values)
    shown = "unknown" if noise is None else f"±{noise:.1f} %{_of(auto)}"
    if noise is not None and noise <= auto.target_pct:
        return f"{shown} after {len(values)} repeats"
    return f"still noisy ({shown}) after {len(values)} repeats"
