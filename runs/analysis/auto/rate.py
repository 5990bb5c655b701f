"""Rate search (the plan's `auto.rate`): the highest open-loop rate (--rate) the server
sustains, by doubling from the start rate while it is held, then bisecting, confirming
every rate that failed before it may end the range and, last, the highest rate held.

A try is judged on its whole run after the warmup: the rate it achieved (sysbench's steady
report, not one interval's median), its latency percentile, and a queue that lasted more
than one report interval (summary.py). Whether a rate is held is not the majority of its
own tries: every try at every rate counts, through a chance of failing fitted
non-decreasing in the rate (failures.py), so that failures striking at every rate (a
shared host's stalls) neither end the range early nor hide, and failures that grow with
the load set the bracket. The answer is that bracket with its evidence, every lower rate
that failed a try, how often the host's noise struck, and, without an SLO, which latency
counted as held: "sustainable up to 6,000 tps: 6,000 held 3/3 (...); 6,500 failed 2/3
(...); ...". A plan that offers its rates itself (a `rate` option axis, no search) is
answered the same way over the rates it offered (offered_conclusion), and a fixed `rate`
option gets the same held or not held (fixed_conclusion).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from runs.analysis.auto import failures
from runs.analysis.auto.cells import QUEUE_FLOOR, CellFigures, Probe, within_slo
from runs.analysis.auto.settings import RateAuto

BISECT_TRIES = 4  # rates tried off the doubling ladder, between held and not held
CONFIRM = 3  # tries of a failed rate before it ends the range, and of the answer
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
    pct = cell.latency_label
    if not within_slo(cell, auto.slo_p95_ms):
        return False, f"{pct} {cell.p95 or 0:.2f} ms > SLO {auto.slo_p95_ms:g} ms"
    queue = f", queue ≤ {cell.queue_max:,}" if cell.queue_max is not None else ""
    p95 = f", {pct} {cell.p95:.2f} ms" if cell.p95 is not None else ""
    return True, f"achieved {achieved:,.0f} tps{queue}{p95}"


@dataclass(frozen=True)
class PointVerdict:
    """A rate's tries, judged one by one; `ok`: held, by the fit over every rate."""

    held: int
    tried: int
    why: str  # what says so: the first try on the side of the verdict
    ok: bool

    @property
    def tally(self) -> str:
        """`held 3/3`, `failed 2/3`."""
        if self.ok and self.held * 2 <= self.tried:  # held by the tries around it
            return f"held {self.held}/{self.tried}, marginal, held by the fit over every rate"
        if self.ok:
            return f"held {self.held}/{self.tried}"
        return f"failed {self.tried - self.held}/{self.tried}"

    @property
    def evidence(self) -> str:
        """`held 3/3 (achieved ...)`, `failed 2/3 (the queue ...)`."""
        return f"{self.tally} ({self.why})"


def _judged(rate: int, cell: CellFigures, auto: RateAuto) -> list[tuple[bool, str]]:
    return [sustained(rate, one, auto) for one in cell.each]


def point_verdict(
    rate: int, cell: CellFigures, auto: RateAuto, held: bool | None = None
) -> PointVerdict:
    """A rate's verdict: `held` as the model fitted it, else the majority of its tries."""
    judged = _judged(rate, cell, auto)
    count = sum(ok for ok, _ in judged)
    ok = count * 2 > len(judged) if held is None else held
    why = next((text for good, text in judged if good == ok), judged[0][1])
    return PointVerdict(count, len(judged), why, ok)


def model(points: Mapping[int, CellFigures], auto: RateAuto) -> dict[int, failures.RateTries]:
    """The fitted chance of failing at each rate measured (a rate whose run failed for
    another reason than its queue says nothing about the rate, and is left out)."""
    return failures.fit(
        {
            rate: [ok for ok, _ in _judged(rate, cell, auto)]
            for rate, cell in points.items()
            if not _stopped(cell) and (cell.values or cell.failure)
        }
    )


def verdicts(points: Mapping[int, CellFigures], auto: RateAuto) -> dict[int, PointVerdict]:
    fitted = model(points, auto)
    return {r: point_verdict(r, points[r], auto, t.held) for r, t in sorted(fitted.items())}


def most_runs(auto: RateAuto, repeats: int) -> int:
    """The runs a search of one line may take at most, each rate with `repeats`: the
    doublings from the start to the maximum (or the halvings down to 1), the bisection,
    both ends of the bracket confirmed (an upper bound, for the editor's estimate)."""
    up = max(math.ceil(math.log2(auto.max / auto.start)), 0) if auto.max > auto.start else 0
    down = auto.start.bit_length()
    confirm = 2 * max(CONFIRM - repeats, 0)
    return (max(up, down) + 1 + BISECT_TRIES) * repeats + confirm


def rate_probe(points: Mapping[int, CellFigures], auto: RateAuto) -> Probe:
    """Double from the start rate while it is held (halve while it is not), confirm a rate
    that failed before it ends the range, bisect between the highest held and the lowest
    not held, then confirm the highest held."""
    if auto.start not in points:
        return Probe(auto.start, f"rate search: start at {auto.start:,} tps")
    if _stopped(points[auto.start]):
        return Probe(None, "")
    fitted = model(points, auto)
    low, high = rate_bracket(points, auto)
    if high is not None and points[high].attempts < CONFIRM:
        tally = point_verdict(high, points[high], auto, False).tally
        reason = f"rate search: confirm {high:,} tps, the lowest not sustained so far ({tally})"
        return Probe(high, reason, repeats=CONFIRM - points[high].attempts)
    above = _above(points, auto, high)
    if above is not None:
        return above
    following = _following(points, auto, low, high)
    if following is not None:
        return following
    if low is not None and fitted:
        return _confirm_low(low, points[low], fitted[low])
    return Probe(None, "")


def _confirm_low(low: int, cell: CellFigures, tries: failures.RateTries) -> Probe:
    """The answer tried CONFIRM times; twice that when most of its own tries failed (held
    only by the tries around it), so that more of its own decide."""
    if cell.attempts < CONFIRM:
        tally = f"held {tries.tried - tries.failed}/{tries.tried}"
        reason = f"rate search: confirm {low:,} tps, the highest sustained so far ({tally})"
        return Probe(low, reason, repeats=CONFIRM - cell.attempts)
    if tries.failed * 2 > tries.tried and cell.attempts < 2 * CONFIRM:
        reason = (
            f"rate search: more tries of {low:,} tps, the highest sustained so far: "
            f"{tries.failed} of its {tries.tried} tries failed (the host's noise or the load?)"
        )
        return Probe(low, reason, repeats=2 * CONFIRM - cell.attempts)
    return Probe(None, "")


def _above(points: Mapping[int, CellFigures], auto: RateAuto, high: int | None) -> Probe | None:
    """A failed rate sets the bracket only once a rate above it failed too (failures that
    grow with the load); a host's noise strikes above as below, and the tries above then
    pool with it (failures.py)."""
    if high is None or high >= auto.max:
        return None
    higher = [r for r in points if r > high]
    if higher:
        rate = min(higher)
        overflowed = QUEUE_FULL in points[rate].failure  # far past the load: said enough
        if _stopped(points[rate]) or overflowed or points[rate].attempts >= CONFIRM:
            return None
        repeats = CONFIRM - points[rate].attempts
    else:
        # One precision increment above, not a doubling: a failure that grows with the load
        # shows there too, and sysbench's event queue does not overflow far past it.
        increment = max(1, int(high * auto.precision_pct / 100))
        rate, repeats = min(high + increment, auto.max), CONFIRM
    reason = f"rate search: {rate:,} tps, whether the failures at {high:,} grow with the load"
    return Probe(rate, reason, repeats=repeats)


def _following(
    points: Mapping[int, CellFigures], auto: RateAuto, low: int | None, high: int | None
) -> Probe | None:
    """The next rate off the bracket: doubling, halving or bisecting; None when done."""
    if high is None and low is not None:
        rate = min(low * 2, auto.max)
        reason = f"rate search: {rate:,} tps, since {low:,} was sustained"
    elif low is None and high is not None:
        rate = high // 2
        reason = f"rate search: {rate:,} tps, since {high:,} was not sustained"
    elif low is not None and high is not None:
        rate = (low + high) // 2
        narrow = high <= low * (1 + auto.precision_pct / 100) or rate in (low, high)
        if narrow or _bisected(points, auto) >= BISECT_TRIES:
            return None
        reason = f"rate search: {rate:,} tps, between {low:,} (sustained) and {high:,} (not)"
    else:
        return None
    if rate < 1 or rate in (low, high) or rate in points:
        return None  # at an end of the range, or a rate whose run failed: stop there
    return Probe(rate, reason)


def _bisected(points: Mapping[int, CellFigures], auto: RateAuto) -> int:
    """Rates tried off the doubling (and halving) ladder from the start rate."""
    ladder, rate = {auto.start, auto.max}, auto.start
    while rate < auto.max:
        rate = min(rate * 2, auto.max)
        ladder.add(rate)
    rate = auto.start
    while rate > 1:
        rate //= 2
        ladder.add(rate)
    return sum(1 for r in points if r not in ladder)


def _stopped(cell: CellFigures) -> bool:
    # A failure other than the overflowing queue says nothing about the rate: stop there.
    return (bool(cell.failure) and QUEUE_FULL not in cell.failure) or cell.pending


def rate_bracket(
    points: Mapping[int, CellFigures], auto: RateAuto
) -> tuple[int | None, int | None]:
    """The search's answer: the highest rate held and the lowest not held above it."""
    fitted = model(points, auto)
    low = failures.highest_held(fitted)
    return low, failures.lowest_not_held(fitted, low)


def rate_conclusion(points: Mapping[int, CellFigures], auto: RateAuto) -> str:
    """`sustainable up to 6,000 tps: 6,000 held 3/3 (achieved 6,010 tps, queue ≤ 2);
    6,500 failed 2/3 (the queue held 4,329 ...); ...`."""
    if not points:
        return "no rate measured"
    judged = verdicts(points, auto)
    low, high = rate_bracket(points, auto)
    if low is None:
        text = f"no rate sustained down to {min(points):,} tps"
    else:
        text = f"sustainable up to {low:,} tps: {low:,} {judged[low].evidence}"
        if low == auto.max:
            text += ", the maximum searched"
    if high is not None:
        text += f"; {high:,} {judged[high].evidence}"
    text += _what_else(points, auto, low, high)
    failed = [cell.failure for cell in points.values() if _stopped(cell) and cell.failure]
    if failed:
        text += f"; a run failed: {failed[0].splitlines()[0]}"
    return text


def _what_else(
    points: Mapping[int, CellFigures], auto: RateAuto, low: int | None, high: int | None
) -> str:
    """Every lower rate that failed a try, the host's noise, the fitted chance of failing,
    and without an SLO which latency counted as held."""
    fitted = model(points, auto)
    parts = []
    below = [r for r, t in sorted(fitted.items()) if t.failed and low is not None and r < low]
    if below:
        said = [f"{r:,} {point_verdict(r, points[r], auto, False).tally}" for r in below]
        parts.append(f"lower rates with failed tries: {', '.join(said)}")
    parts.append(failures.noise_text(fitted, low))
    if high is not None:
        parts.append(failures.chance_text(fitted, low, high))
    parts.append(_latency_held(points, auto, low))
    return "".join(f"; {part}" for part in parts if part)


def _latency_held(points: Mapping[int, CellFigures], auto: RateAuto, low: int | None) -> str:
    if auto.slo_p95_ms is not None or low is None:
        return ""
    held = [c for r, c in points.items() if r <= low and c.p95 is not None]
    if not held:
        return ""
    worst = max(held, key=lambda c: c.p95 or 0.0)
    return (
        f"no latency SLO: held counts any latency, up to {worst.latency_label} "
        f"{worst.p95:.2f} ms here (set slo_p95_ms to bound it)"
    )


def offered_conclusion(points: Mapping[int, CellFigures], auto: RateAuto) -> str:
    """A plan's own offered rates (a `rate` axis, no search), judged as the search judges
    its rates: the highest offered rate held, and the next one offered above it.
    `sustainable up to 6,000 tps: 6,000 held 3/3 (...); 8,000 failed 2/3 (...)`."""
    judged = verdicts(points, auto)
    failed = sorted(rate for rate, cell in points.items() if _stopped(cell) and cell.failure)
    text = _offered_text(points, judged, auto)
    if failed:  # a failure other than the queue says nothing about the rate: named apart
        first = points[failed[0]].failure.splitlines()[0]
        return f"{text}; a run failed at {failed[0]:,} tps: {first}"
    return text


def _offered_text(
    points: Mapping[int, CellFigures], judged: Mapping[int, PointVerdict], auto: RateAuto
) -> str:
    if not judged:
        return "no offered rate measured"
    held = [rate for rate, verdict in judged.items() if verdict.ok]
    if not held:
        lowest = min(judged)
        return f"no offered rate sustained: {lowest:,} {judged[lowest].evidence}"
    low = max(held)
    text = f"sustainable up to {low:,} tps: {low:,} {judged[low].evidence}"
    above = [rate for rate in judged if rate > low]
    text += f"; {above[0]:,} {judged[above[0]].evidence}" if above else ", the highest offered"
    return text + _what_else(points, auto, low, above[0] if above else None)


def fixed_conclusion(rate: int, cell: CellFigures, auto: RateAuto) -> str:
    """A fixed `rate` option (not an axis): held or not, on the same rules as a search's
    rate: `at the fixed rate of 500 tps: held 3/3 (achieved 499 tps, p95 3.20 ms)`."""
    points = {rate: cell}
    judged = verdicts(points, auto)
    if rate not in judged:
        return f"at the fixed rate of {rate:,} tps: no try finished"
    verdict = judged[rate]
    word = "held" if verdict.ok else "not held"
    text = f"at the fixed rate of {rate:,} tps: {word}, {verdict.evidence}"
    return text + _what_else(points, auto, rate if verdict.ok else None, None)
