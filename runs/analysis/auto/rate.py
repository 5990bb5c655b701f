"""Rate search (the plan's `auto.rate`): the highest open-loop rate (--rate) the server
sustains, by doubling from the start rate while it is kept up with, then bisecting.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from runs.analysis.auto.cells import CellFigures, Step, within_slo
from runs.analysis.auto.settings import RateAuto

BISECT_STEPS = 4  # rates tried between the last sustained and the first not sustained
BACKLOG_S = 0.1  # a queue holding more than this many seconds of arrivals is not keeping up
GROWING_S = 0.01  # nor does one still growing at the end past this many seconds of arrivals
QUEUE_FLOOR = 10  # a few events waiting is normal at any rate
QUEUE_FULL = "event queue is full"  # sysbench gave up: the rate was far out of reach


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
    if not within_slo(cell, auto.slo_p95_ms):
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
