"""The auto modes of a plan: repeats until the answer is clear, the knee of the threads
curve, the highest sustainable open-loop rate.

Each mode reads only the runs measured so far and says which run to add next and why,
or that it is done and what it found; nothing is remembered between steps, so a batch
that resumes after a crash goes on where it was. The batch's execution (execution/
adaptive.py) adds the runs this module asks for as ordinary runs.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy import stats as scipy_stats

from runs.analysis.modes import RateAuto, RepeatsAuto, ThreadsAuto
from runs.analysis.results import FINISHED_WELL, NOT_RUN, RunFigures, series_label

REFINE_STEPS = 2  # thread counts tried between the last two doublings
BISECT_STEPS = 4  # rates tried between the last sustained and the first not sustained
BACKLOG_S = 0.1  # a queue holding more than this many seconds of arrivals is not keeping up
GROWING_S = 0.01  # nor does one still growing at the end past this many seconds of arrivals
QUEUE_FLOOR = 10  # a few events waiting is normal at any rate
QUEUE_FULL = "event queue is full"  # sysbench gave up: the rate was far out of reach


# --- what the runs so far say ----------------------------------------------------------------


@dataclass(frozen=True)
class CellFigures:
    """The repeats of one cell reduced to what the searches read."""

    attempts: int  # runs of the cell, finished or not, failed ones too
    values: tuple[float, ...]  # throughput of the repeats that finished well
    p95: float | None  # median p95 latency, ms
    achieved: float | None  # median steady interval throughput (what --rate achieved)
    queue_max: int | None
    queue_growing: int | None  # a queue at least twice as long at the end as early on
    failure: str  # the error of a failed repeat, "" when none failed

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    @property
    def pending(self) -> bool:
        return self.attempts > len(self.values) and not self.failure


def cell_figures(runs: Sequence[RunFigures]) -> CellFigures:
    good = [r for r in runs if r.status in FINISHED_WELL and r.throughput is not None]
    failed = [r for r in runs if r.status not in FINISHED_WELL and r.status not in NOT_RUN]
    p95 = [v for r in good if (v := r.latency_ms) is not None]
    achieved = [v for r in good if (v := _interval_median(r)) is not None]
    queues = [int(r.summary["queue_length_max"]) for r in good if "queue_length_max" in r.summary]
    growing = [n for r in good if (n := _queue_growing(r.summary)) is not None]
    return CellFigures(
        attempts=len(runs),
        values=tuple(float(r.throughput or 0) for r in good),
        p95=statistics.median(p95) if p95 else None,
        achieved=statistics.median(achieved) if achieved else None,
        queue_max=max(queues) if queues else None,
        queue_growing=max(growing) if growing else None,
        failure=(failed[0].error or failed[0].status) if failed else "",
    )


def _queue_growing(summary: Mapping[str, Any]) -> int | None:
    last, early = summary.get("queue_length_last"), summary.get("queue_length_early_max")
    if last is None or early is None or last <= 2 * early:
        return None
    return int(last)


def _interval_median(run: RunFigures) -> float | None:
    interval = run.summary.get("interval_tps") or {}
    value = interval.get("median")
    return float(value) if value is not None else run.throughput


def half_width_pct(values: Sequence[float]) -> float | None:
    """The half-width of the 95 % confidence interval of the mean, in % of the mean."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean == 0:
        return None
    t = float(scipy_stats.t.ppf(0.975, len(values) - 1))
    return t * statistics.stdev(values) / math.sqrt(len(values)) / mean * 100


# --- repeats ---------------------------------------------------------------------------------


def repeat_step(cell: CellFigures, auto: RepeatsAuto, label: str) -> str | None:
    """Why one more repeat of a cell is due, or None when its mean is clear enough."""
    if cell.attempts >= auto.max:
        return None
    noise = half_width_pct(cell.values)
    if noise is None:
        return f"repeat {cell.attempts + 1} of {label}: too few finished repeats to measure noise"
    if noise <= auto.target_pct:
        return None
    return f"repeat {cell.attempts + 1} of {label}: ±{noise:.1f} % > target ±{auto.target_pct:g} %"


def repeats_conclusion(cell: CellFigures, auto: RepeatsAuto) -> str:
    """`±1.2 % after 3 repeats`, or the honest `still noisy (±6.0 %) after 5 repeats`."""
    noise = half_width_pct(cell.values)
    shown = "unknown" if noise is None else f"±{noise:.1f} %"
    if noise is not None and noise <= auto.target_pct:
        return f"{shown} after {len(cell.values)} repeats"
    return f"still noisy ({shown}) after {len(cell.values)} repeats"


# --- threads ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """The next value to measure (threads or rate) and why; value None: the search is over."""

    value: int | None
    reason: str


def threads_step(points: Mapping[int, CellFigures], auto: ThreadsAuto) -> Step:
    """Start at 1, double while throughput rises by more than rise_pct and p95 stays under
    the SLO, then refine between the last two points."""
    if 1 not in points:
        return Step(1, "threads search: start at 1 thread")
    if not _usable(points[1]) or not _within_slo(points[1], auto.slo_p95_ms):
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


def _usable(cell: CellFigures) -> bool:
    return cell.median is not None and not cell.failure


def _within_slo(cell: CellFigures, slo: float | None) -> bool:
    return slo is None or (cell.p95 is not None and cell.p95 <= slo)


def _better(low: CellFigures, high: CellFigures, auto: ThreadsAuto) -> bool:
    if not _usable(low) or not _usable(high) or not _within_slo(high, auto.slo_p95_ms):
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
    usable = {t: c for t, c in points.items() if _usable(c)}
    within = {t: c for t, c in usable.items() if _within_slo(c, auto.slo_p95_ms)}
    if not within:
        if auto.slo_p95_ms is not None and usable:
            return f"p95 above {auto.slo_p95_ms:g} ms from 1 thread on"
        return "no thread count finished"
    peak = max(within, key=lambda t: within[t].median or 0)
    text = f"peak {within[peak].median:,.0f} {unit} at {_threads(peak)}"
    if auto.slo_p95_ms is not None:
        text += f"; p95 ≤ {auto.slo_p95_ms:g} ms up to {_threads(max(within))}"
    elif within[peak].p95 is not None:
        text += f" (p95 {within[peak].p95:.2f} ms)"
    if peak == auto.max and peak == max(points):
        text += f"; still rising at the upper bound of {_threads(auto.max)}"
    return text


def _threads(count: int) -> str:
    return "1 thread" if count == 1 else f"{count} threads"


# --- open-loop rate ----------------------------------------------------------------------


def sustained(rate: int, cell: CellFigures, auto: RateAuto) -> tuple[bool, str]:
    """Whether a rate was kept up with, and what says so or not."""
    if QUEUE_FULL in cell.failure:
        return False, "sysbench's event queue overflowed"
    achieved = cell.achieved or 0.0
    if achieved < rate * (1 - auto.tolerance_pct / 100):
        return False, f"achieved {achieved:,.0f} of {rate:,} tps"
    bound = max(QUEUE_FLOOR, rate * BACKLOG_S)
    if cell.queue_max is not None and cell.queue_max > bound:
        return (
            False,
            f"the queue grew to {cell.queue_max:,}, over {BACKLOG_S * 1000:g} ms of arrivals",
        )
    if cell.queue_growing is not None and cell.queue_growing > max(QUEUE_FLOOR, rate * GROWING_S):
        return False, f"the queue was still growing at the end ({cell.queue_growing:,})"
    if not _within_slo(cell, auto.slo_p95_ms):
        return False, f"p95 {cell.p95 or 0:.2f} ms > SLO {auto.slo_p95_ms:g} ms"
    queue = f", queue ≤ {cell.queue_max:,}" if cell.queue_max is not None else ""
    p95 = f", p95 {cell.p95:.2f} ms" if cell.p95 is not None else ""
    return True, f"achieved {achieved:,.0f} tps{queue}{p95}"


def rate_step(points: Mapping[int, CellFigures], auto: RateAuto) -> Step:
    """Double from the start rate while it is sustained (halve while it is not), then
    bisect between the highest sustained and the lowest not sustained."""
    low, high, step = _bracket(points, auto)
    if step is not None:
        return step
    assert low is not None and high is not None
    for _ in range(BISECT_STEPS):
        middle = (low + high) // 2
        if high <= low * (1 + auto.precision_pct / 100) or middle in (low, high):
            break
        if middle not in points:
            return Step(middle, f"rate search: {middle:,} tps, between {low:,} (sustained) and "
                                f"{high:,} (not)")  # fmt: skip
        if _sustained(middle, points, auto):
            low = middle
        else:
            high = middle
    return Step(None, "")


def _bracket(
    points: Mapping[int, CellFigures], auto: RateAuto
) -> tuple[int | None, int | None, Step | None]:
    rate = auto.start
    if rate not in points:
        return None, None, Step(rate, f"rate search: start at {rate:,} tps")
    if _stopped(points[rate]):
        return None, None, Step(None, "")
    going_up = _sustained(rate, points, auto)
    while True:
        following = min(rate * 2, auto.max) if going_up else rate // 2
        if following == rate or following < 1:
            return None, None, Step(None, "")
        if following not in points:
            verb = "was sustained" if going_up else "was not sustained"
            return (
                None,
                None,
                Step(following, f"rate search: {following:,} tps, since {rate:,} {verb}"),
            )
        if _stopped(points[following]):
            return None, None, Step(None, "")
        if _sustained(following, points, auto) != going_up:
            low, high = (rate, following) if going_up else (following, rate)
            return low, high, None
        rate = following


def _sustained(rate: int, points: Mapping[int, CellFigures], auto: RateAuto) -> bool:
    return sustained(rate, points[rate], auto)[0]


def _stopped(cell: CellFigures) -> bool:
    # A failure other than the overflowing queue says nothing about the rate: stop there.
    return (bool(cell.failure) and QUEUE_FULL not in cell.failure) or cell.pending


def rate_conclusion(points: Mapping[int, CellFigures], auto: RateAuto) -> str:
    """`highest sustainable rate 20,000 tps (achieved 20,160 tps, queue ≤ 10); 40,000 tps
    was not sustained (the queue grew to 4,329 ...)`."""
    verdicts = {
        rate: sustained(rate, cell, auto) for rate, cell in points.items() if not _stopped(cell)
    }
    good = [rate for rate, (ok, _) in verdicts.items() if ok]
    bad = [rate for rate, (ok, _) in verdicts.items() if not ok]
    failed = [cell.failure for cell in points.values() if _stopped(cell) and cell.failure]
    if not good:
        text = f"no rate sustained down to {min(points):,} tps" if points else "no rate measured"
    else:
        best = max(good)
        text = f"highest sustainable rate {best:,} tps ({verdicts[best][1]})"
        if best == auto.max:
            text += ", the maximum searched"
    above = [rate for rate in bad if not good or rate > max(good)]
    if above:
        first = min(above)
        text += f"; {first:,} tps was not sustained ({verdicts[first][1]})"
    if failed:
        text += f"; a run failed: {failed[0].splitlines()[0]}"
    return text


def line_label(run: RunFigures, without: str) -> str:
    """A search line's name: the cell's settings and option values but the searched one."""
    options = {k: v for k, v in run.axis_options.items() if k != without}
    label = series_label(run.settings, options)
    return label if without == "threads" else f"{label}, {_threads(run.threads)}"
