"""The rate search's model of failure against the offered rate: every try at every rate
counts, the chance of failing is fitted non-decreasing in the rate (a rate cannot be
easier to sustain than a lower one: pool-adjacent-violators, weighted by tries), and a
rate is held until its fitted chance of failing reaches three in four: a load out of
reach fails (nearly) every try, while a host's noise striking one try in four fails two
of three tries at some rate of a long ladder by chance alone (one in six), which a
majority rule would take for the end of the range.

One try in four failing *at every rate* (a neighbour's CPU stalls on a shared host) then
fits about 25 % everywhere and holds every rate, while failures that grow with the load
fit near 100 % above the capacity: the host's noise no longer sets the bracket, and the
answer says how often it struck, and where. A single failed try among held neighbours is
pooled with them rather than taken as the end of the range.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

HELD_BELOW = 0.75  # a rate is held while its fitted chance of failing stays under this


@dataclass(frozen=True)
class RateTries:
    """The tries of one rate: how many, how many failed, and what each said."""

    rate: int
    tried: int
    failed: int
    fitted: float  # the chance of failing at this rate, from the monotone fit

    @property
    def held(self) -> bool:
        return self.fitted < HELD_BELOW


def monotone_fit(counts: Sequence[tuple[int, int]]) -> list[float]:
    """The failure share of each (tried, failed), in rate order, fitted non-decreasing:
    adjacent blocks that would fall are pooled into their weighted share."""
    blocks: list[list[float]] = []  # [failed, tried, how many rates]
    for tried, failed in counts:
        blocks.append([float(failed), float(max(tried, 1)), 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            last = blocks.pop()
            blocks[-1] = [blocks[-1][0] + last[0], blocks[-1][1] + last[1], blocks[-1][2] + last[2]]
    fitted: list[float] = []
    for share_failed, share_tried, rates in blocks:
        fitted += [share_failed / share_tried] * int(rates)
    return fitted


def fit(judged: Mapping[int, Sequence[bool]]) -> dict[int, RateTries]:
    """Each rate's tries (True: held) with the fitted chance of failing."""
    rates = sorted(r for r in judged if judged[r])
    counts = [(len(judged[r]), sum(not ok for ok in judged[r])) for r in rates]
    return {
        rate: RateTries(rate, tried, failed, share)
        for rate, (tried, failed), share in zip(rates, counts, monotone_fit(counts), strict=True)
    }


def highest_held(model: Mapping[int, RateTries]) -> int | None:
    held = [rate for rate, tries in model.items() if tries.held]
    return max(held) if held else None


def lowest_not_held(model: Mapping[int, RateTries], above: int | None) -> int | None:
    failing = [r for r, t in model.items() if not t.held and (above is None or r > above)]
    return min(failing) if failing else None


def noise_text(model: Mapping[int, RateTries], held_up_to: int | None) -> str:
    """What the failures at held rates were: the host's noise where a higher rate held
    (they do not grow with the load), with how often and where; at the highest rate held
    alone, perhaps where the load begins to tell."""
    if held_up_to is None:
        return ""
    held = [t for r, t in sorted(model.items()) if r <= held_up_to]
    struck = [t for t in held if t.failed]
    if not struck:
        return ""
    failed, tried = sum(t.failed for t in held), sum(t.tried for t in held)
    where = ", ".join(f"{t.rate:,} ({t.failed}/{t.tried})" for t in struck)
    if struck[0].rate < held_up_to:
        return (
            f"the host's noise, not the load: {failed} of {tried} tries at rates held "
            f"failed ({failed / tried * 100:.0f} %), at {where}, with higher rates held, so "
            "these failures do not grow with the load and do not set the bracket"
        )
    top = struck[0]
    return f"{top.rate:,} itself failed {top.failed} of {top.tried} tries: the load may begin there"


def chance_text(model: Mapping[int, RateTries], low: int | None, high: int | None) -> str:
    """`estimated chance of failing: 25 % up to 2,400 tps, 100 % at 3,000`."""
    parts = []
    if low is not None:
        parts.append(f"{model[low].fitted * 100:.0f} % up to {low:,} tps")
    if high is not None:
        parts.append(f"{model[high].fitted * 100:.0f} % at {high:,}")
    return f"estimated chance of failing: {', '.join(parts)}" if parts else ""
