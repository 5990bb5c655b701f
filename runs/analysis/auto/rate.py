"""Rate search (the plan's `auto.rate`): the highest open-loop rate (--rate) the server
sustains, by doubling from the start rate while it is kept up with, then bisecting, then
confirming: the last rate held and the first one not held are each tried CONFIRM times
and judged by the majority of their tries, so that one noisy second cannot decide the
answer. A try is judged on its steady state (after the warmup), and a queue counts only
when it lasted more than one report interval (summary.py). The answer is a bracket with
its evidence: "sustainable up to 6,000 tps: 6,000 held 3/3 (...); 6,500 failed 2/3 (...)".
A plan that offers its rates itself (a `rate` option axis, no search) is answered the same
way over the rates it offered (offered_conclusion).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from runs.analysis.auto.cells import QUEUE_FLOOR, CellFigures, Probe, within_slo
from runs.analysis.auto.settings import RateAuto

BISECT_TRIES = 4  # rates tried between the last sustained and the first not sustained
CONFIRM = 3  # tries of each end of the bracket before the search concludes (majority)
BACKLOG_S = 0.1  # a queue holding more than this many seconds of arrivals is not keeping up
GROWING_S = 0.01  # nor does one still growing at the end past this many seconds of arrivals
QUEUE_FULL = "event queue is full"  # sysbench gave up: the rate was far out of reach


def sustained(rate: int, cell: CellFigures, auto: RateAuto) -> tuple[bool, str]:
    """Whether one try kept up with a rate, and what says so or not."""
    if QUEUE_FULL in cell.failure:
        return False, "sysbench's event queue overflowed"
    achieved = cell.achieved or 0.0
    if achieved < rate * (1 - auto.tolerance_pct / 100):
        return False, f"achieved {achieved:,.0f} of {rate:,} tps"
    bound = max(QUEUE_FLOOR, rate * BACKLOG_S)
    if cell.queue_max is not None and cell.queue_max > bound:
        return (
            False,
            f"the queue held {cell.queue_max:,} for more than one interval, over "
            f"{BACKLOG_S * 1000:g} ms of arrivals",
        )
    if cell.queue_growing is not None and cell.queue_growing > max(QUEUE_FLOOR, rate * GROWING_S):
        return False, f"the queue was still growing at the end ({cell.queue_growing:,})"
    if not within_slo(cell, auto.slo_p95_ms):
        return False, f"p95 {cell.p95 or 0:.2f} ms > SLO {auto.slo_p95_ms:g} ms"
    queue = f", queue ≤ {cell.queue_max:,}" if cell.queue_max is not None else ""
    p95 = f", p95 {cell.p95:.2f} ms" if cell.p95 is not None else ""
    return True, f"achieved {achieved:,.0f} tps{queue}{p95}"


@dataclass(frozen=True)
class PointVerdict:
    """A rate's tries, judged one by one; held by the majority of them."""

    held: int
    tried: int
    why: str  # what says so: the first try on the side of the majority

    @property
    def ok(self) -> bool:
        return self.held * 2 > self.tried

    @property
    def tally(self) -> str:
        """`held 3/3`, `failed 2/3`."""
        if self.ok:
            return f"held {self.held}/{self.tried}"
        return f"failed {self.tried - self.held}/{self.tried}"

    @property
    def evidence(self) -> str:
        """`held 3/3 (achieved ...)`, `failed 2/3 (the queue ...)`."""
        return f"{self.tally} ({self.why})"


def point_verdict(rate: int, cell: CellFigures, auto: RateAuto) -> PointVerdict:
    judged = [sustained(rate, one, auto) for one in cell.each]
    held = sum(ok for ok, _ in judged)
    majority = held * 2 > len(judged)
    why = next(text for ok, text in judged if ok == majority)
    return PointVerdict(held, len(judged), why)


def most_runs(auto: RateAuto, repeats: int) -> int:
    """The runs a search of one line may take at most, each rate with `repeats`: the
    doublings from the start to the maximum (or the halvings down to 1), the bisection,
    both ends of the bracket confirmed (an upper bound, for the editor's estimate)."""
    up = max(math.ceil(math.log2(auto.max / auto.start)), 0) if auto.max > auto.start else 0
    down = auto.start.bit_length()
    confirm = 2 * max(CONFIRM - repeats, 0)
    return (max(up, down) + 1 + BISECT_TRIES) * repeats + confirm


def rate_probe(points: Mapping[int, CellFigures], auto: RateAuto) -> Probe:
    """Double from the start rate while it is sustained (halve while it is not), bisect
    between the highest sustained and the lowest not sustained, then confirm both."""
    probe, low, high = _search(points, auto)
    if probe is not None:
        return probe
    for rate, side in ((high, "the lowest not sustained"), (low, "the highest sustained")):
        if rate is not None and points[rate].attempts < CONFIRM and not _stopped(points[rate]):
            tally = point_verdict(rate, points[rate], auto).tally
            reason = f"rate search: confirm {rate:,} tps, {side} so far ({tally})"
            return Probe(rate, reason, repeats=CONFIRM - points[rate].attempts)
    return Probe(None, "")


def _search(
    points: Mapping[int, CellFigures], auto: RateAuto
) -> tuple[Probe | None, int | None, int | None]:
    """The next rate to try, or none and the bracket found: the highest rate sustained
    and the lowest not sustained above it (either None at an end of the range)."""
    low, high, probe = _bracket(points, auto)
    if probe is not None or (low is None or high is None):
        return probe, low, high
    for _ in range(BISECT_TRIES):
        middle = (low + high) // 2
        if high <= low * (1 + auto.precision_pct / 100) or middle in (low, high):
            break
        if middle not in points:
            return Probe(middle, f"rate search: {middle:,} tps, between {low:,} (sustained) and "
                                f"{high:,} (not)"), low, high  # fmt: skip
        if _stopped(points[middle]):
            break
        if _sustained(middle, points, auto):
            low = middle
        else:
            high = middle
    return None, low, high


def _bracket(
    points: Mapping[int, CellFigures], auto: RateAuto
) -> tuple[int | None, int | None, Probe | None]:
    rate = auto.start
    if rate not in points:
        return None, None, Probe(rate, f"rate search: start at {rate:,} tps")
    if _stopped(points[rate]):
        return None, None, None
    going_up = _sustained(rate, points, auto)
    while True:
        following = min(rate * 2, auto.max) if going_up else rate // 2
        if following == rate or following < 1:
            return (rate, None, None) if going_up else (None, rate, None)
        if following not in points:
            verb = "was sustained" if going_up else "was not sustained"
            probe = Probe(following, f"rate search: {following:,} tps, since {rate:,} {verb}")
            return (rate, None, probe) if going_up else (None, rate, probe)
        if _stopped(points[following]):
            return (rate, None, None) if going_up else (None, rate, None)
        if _sustained(following, points, auto) != going_up:
            low, high = (rate, following) if going_up else (following, rate)
            return low, high, None
        rate = following


def _sustained(rate: int, points: Mapping[int, CellFigures], auto: RateAuto) -> bool:
    return point_verdict(rate, points[rate], auto).ok


def _stopped(cell: CellFigures) -> bool:
    # A failure other than the overflowing queue says nothing about the rate: stop there.
    return (bool(cell.failure) and QUEUE_FULL not in cell.failure) or cell.pending


def rate_bracket(
    points: Mapping[int, CellFigures], auto: RateAuto
) -> tuple[int | None, int | None]:
    """The search's answer: the highest rate sustained and the lowest not sustained."""
    _, low, high = _search(points, auto)
    return low, high


def rate_conclusion(points: Mapping[int, CellFigures], auto: RateAuto) -> str:
    """`sustainable up to 6,000 tps: 6,000 held 3/3 (achieved 6,010 tps, queue ≤ 2);
    6,500 failed 2/3 (the queue held 4,329 ...)`."""
    if not points:
        return "no rate measured"
    low, high = rate_bracket(points, auto)
    if low is None:
        text = f"no rate sustained down to {min(points):,} tps"
    else:
        evidence = point_verdict(low, points[low], auto).evidence
        text = f"sustainable up to {low:,} tps: {low:,} {evidence}"
        if low == auto.max:
            text += ", the maximum searched"
    if high is not None:
        text += f"; {high:,} {point_verdict(high, points[high], auto).evidence}"
    failed = [cell.failure for cell in points.values() if _stopped(cell) and cell.failure]
    if failed:
        text += f"; a run failed: {failed[0].splitlines()[0]}"
    return text


def offered_conclusion(points: Mapping[int, CellFigures], auto: RateAuto) -> str:
    """A plan's own offered rates (a `rate` axis, no search), judged as the search judges a
    point: the highest offered rate whose tries held, and the next one offered above it.
    `sustainable up to 6,000 tps: 6,000 held 3/3 (...); 8,000 failed 2/3 (...)`."""
    judged = {
        rate: point_verdict(rate, cell, auto)
        for rate, cell in sorted(points.items())
        if (cell.values or cell.failure) and not _stopped(cell)  # held, or overflowed
    }
    failed = sorted(rate for rate, cell in points.items() if _stopped(cell) and cell.failure)
    if failed:  # a failure other than the queue says nothing about the rate: named apart
        first = points[failed[0]].failure.splitlines()[0]
        return f"{_offered_text(judged)}; a run failed at {failed[0]:,} tps: {first}"
    return _offered_text(judged)


def _offered_text(judged: Mapping[int, PointVerdict]) -> str:
    if not judged:
        return "no offered rate measured"
    held = [rate for rate, verdict in judged.items() if verdict.ok]
    if not held:
        lowest = min(judged)
        return f"no offered rate sustained: {lowest:,} {judged[lowest].evidence}"
    low = max(held)
    text = f"sustainable up to {low:,} tps: {low:,} {judged[low].evidence}"
    above = [rate for rate in judged if rate > low]
    if not above:
        return f"{text}, the highest offered"
    return f"{text}; {above[0]:,} {judged[above[0]].evidence}"
