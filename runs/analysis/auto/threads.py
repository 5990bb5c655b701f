"""Threads search (the plan's `auto.threads`): the knee of the throughput curve, by
doubling the threads while throughput rises and p95 stays under the SLO, then refining.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from runs.analysis.auto.cells import CellFigures, Step, threads_text, usable, within_slo
from runs.analysis.auto.settings import ThreadsAuto

REFINE_STEPS = 2  # thread counts tried between the last two doublings


def threads_step(points: Mapping[int, CellFigures], auto: ThreadsAuto) -> Step:
    """Start at 1, double while throughput rises by more than rise_pct and p95 stays under
    the SLO, then refine between the last two points."""
    if 1 not in points:
        return Step(1, "threads search: start at 1 thread")
    if not usable(points[1]) or not within_slo(points[1], auto.slo_p95_ms):
        return Step(None, "")
    previous = 1
    while previous < auto.max:
        count = min(previous * 2, auto.max)
        if count not in points:
            return Step(count, f"threads search: {count} threads, {_rise_text(points, previous)}")
        if not _better(points[previous], points[count], auto):
            return _refine(points, previous, count, auto)
        previous = count
    return Step(None, "")


def _refine(points: Mapping[int, CellFigures], low: int, high: int, auto: ThreadsAuto) -> Step:
    for _ in range(REFINE_STEPS):
        if high - low <= 1:
            break
        middle = (low + high) // 2
        if middle not in points:
            return Step(middle, f"threads search: refining between {low} and {high} threads")
        if _better(points[low], points[middle], auto):
            low = middle
        else:
            high = middle
    return Step(None, "")


def _better(low: CellFigures, high: CellFigures, auto: ThreadsAuto) -> bool:
    if not usable(low) or not usable(high) or not within_slo(high, auto.slo_p95_ms):
        return False
    return (high.median or 0) > (low.median or 0) * (1 + auto.rise_pct / 100)


def _rise_text(points: Mapping[int, CellFigures], count: int) -> str:
    below = count // 2
    if count == 1 or below not in points or not points[below].median:
        return f"doubling from {count} thread{'s' if count > 1 else ''}"
    rise = ((points[count].median or 0) / (points[below].median or 1) - 1) * 100
    return f"since {below} → {count} threads rose {rise:+.0f} %"


def knee_conclusion(points: Mapping[int, CellFigures], auto: ThreadsAuto, unit: str) -> str:
    """`peak 21,050 tps at 4 threads; p95 ≤ 1 ms up to 4 threads`."""
    finished = {t: c for t, c in points.items() if usable(c)}
    within = {t: c for t, c in finished.items() if within_slo(c, auto.slo_p95_ms)}
    if not within:
        if auto.slo_p95_ms is not None and finished:
            return f"p95 above {auto.slo_p95_ms:g} ms from 1 thread on"
        return "no thread count finished"
    peak = max(within, key=lambda t: within[t].median or 0)
    text = f"peak {within[peak].median:,.0f} {unit} at {threads_text(peak)}"
    if auto.slo_p95_ms is not None:
        text += f"; p95 ≤ {auto.slo_p95_ms:g} ms up to {threads_text(max(within))}"
    elif within[peak].p95 is not None:
        text += f" (p95 {within[peak].p95:.2f} ms)"
    if peak == auto.max and peak == max(points):
        text += f"; still rising at the upper bound of {threads_text(auto.max)}"
    return text
