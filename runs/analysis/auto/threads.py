"""Threads search (the plan's `auto.threads`): the knee of the throughput curve, by
doubling the threads while throughput rises and p95 stays under the SLO, then refining,
then confirming: the peak and the thread counts measured either side of it are repeated
in rounds, one run of each a round, shuffled by the batch (runs/execution/auto.py), until
each has CONFIRM, so that minute-to-minute drift falls on all of them alike rather than
on whichever ran its repeats back to back. The answer is the peak with the range of
thread counts whose throughput is not significantly below it (Welch's test on the logs,
verdicts.py, the p-values of the peak's comparisons corrected together as the batch's
cells are, Holm): with one repeat a noisy curve can put its peak at 2 or at 5 threads, its
range says how sure that is.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from runs.analysis.auto.cells import CellFigures, Probe, threads_text, usable, within_slo
from runs.analysis.auto.settings import ThreadsAuto
from runs.analysis.noise import verdicts

REFINE_TRIES = 2  # thread counts tried between the last two doublings
CONFIRM = 3  # repeats of the peak and of its neighbours before the search concludes


def most_runs(auto: ThreadsAuto, repeats: int) -> int:
    """The runs a search of one line may take at most, each point with `repeats`: the
    doublings from 1 to the maximum, the refining tries, the peak and its two neighbours
    confirmed (an upper bound, for the editor's estimate)."""
    doublings = max(auto.max - 1, 0).bit_length() + 1
    confirm = 3 * max(CONFIRM - repeats, 0)
    return (doublings + REFINE_TRIES) * repeats + confirm


def threads_probe(points: Mapping[int, CellFigures], auto: ThreadsAuto) -> Probe:
    """Start at 1, double while throughput rises by more than rise_pct and p95 stays under
    the SLO, refine between the last two points, then confirm the peak (the first cell of
    the confirming round; threads_probes gives the whole round)."""
    probes = threads_probes(points, auto)
    return probes[0] if probes else Probe(None, "")


def threads_probes(points: Mapping[int, CellFigures], auto: ThreadsAuto) -> list[Probe]:
    """The next runs of the search: its next thread count, or a confirming round (one run
    each of the peak and its neighbours still short of CONFIRM); empty when done."""
    probe = _search(points, auto)
    if probe.value is not None:
        return [probe]
    return _confirm(points, auto)


def _confirm(points: Mapping[int, CellFigures], auto: ThreadsAuto) -> list[Probe]:
    peak = _peak(points, auto)
    if peak is None or any(c.pending for c in points.values()):
        return []
    around = _confirmed(points, peak)
    short = [t for t in around if points[t].attempts < CONFIRM and not points[t].failure]
    if not short:
        return []
    done = min(points[t].attempts for t in short)
    names = ", ".join(threads_text(t) for t in around)
    reason = (
        f"threads search: confirm the peak at {threads_text(peak)}, round {done + 1} of "
        f"{CONFIRM} interleaving {names}"
    )
    return [Probe(t, reason, repeats=1) for t in short]


def _confirmed(points: Mapping[int, CellFigures], peak: int) -> list[int]:
    """The peak, its neighbours, and the range within noise of it with a count either
    side: a range must end at a count known to be below the peak, not at one run once."""
    chosen = _around(points, peak)
    counts = sorted(points)
    close = within_noise(points, peak) if usable(points[peak]) else [peak]
    low, high = counts.index(close[0]), counts.index(close[-1])
    edges = [*counts[max(0, low - 1) : low], *close, *counts[high + 1 : high + 2]]
    return chosen + [t for t in edges if t not in chosen]


def _around(points: Mapping[int, CellFigures], peak: int) -> list[int]:
    """The peak and the thread counts measured just below and just above it."""
    counts = sorted(points)
    at = counts.index(peak)
    return [peak, *counts[max(0, at - 1) : at], *counts[at + 1 : at + 2]]


def _peak(points: Mapping[int, CellFigures], auto: ThreadsAuto) -> int | None:
    within = {t: c for t, c in points.items() if usable(c) and within_slo(c, auto.slo_p95_ms)}
    return max(within, key=lambda t: within[t].mean or 0) if within else None


def within_noise(points: Mapping[int, CellFigures], peak: int) -> list[int]:
    """The thread counts, next to each other around the peak, whose throughput is not
    significantly below the peak's (Welch's test, 95 %, corrected for the comparisons made
    with the peak: Holm); one repeat a side cannot tell, and is left out."""
    counts = sorted(t for t, c in points.items() if usable(c))
    below = significantly_below(points, peak)
    close = {t for t in counts if t == peak or (t not in below and _comparable(points, peak, t))}
    at = counts.index(peak)
    low = at
    while low > 0 and counts[low - 1] in close:
        low -= 1
    high = at
    while high + 1 < len(counts) and counts[high + 1] in close:
        high += 1
    return counts[low : high + 1]


def _comparable(points: Mapping[int, CellFigures], peak: int, other: int) -> bool:
    return min(len(points[peak].values), len(points[other].values)) >= 2


def peak_verdicts(points: Mapping[int, CellFigures], peak: int) -> dict[int, verdicts.Verdict]:
    """Each other thread count against the peak (Welch's test on the logs), the p-values
    corrected together (Holm), as the batch corrects its cells."""
    others = [t for t, c in sorted(points.items()) if t != peak and usable(c)]
    others = [t for t in others if _comparable(points, peak, t)]
    tested = [verdicts.welch(points[peak].values, points[t].values) for t in others]
    return dict(zip(others, verdicts.corrected(tested), strict=True))


def significantly_below(points: Mapping[int, CellFigures], peak: int) -> set[int]:
    found = peak_verdicts(points, peak)
    return {t for t, v in found.items() if v.verdict == verdicts.SLOWER}


def _search(points: Mapping[int, CellFigures], auto: ThreadsAuto) -> Probe:
    if 1 not in points:
        return Probe(1, "threads search: start at 1 thread")
    if not usable(points[1]) or not within_slo(points[1], auto.slo_p95_ms):
        return Probe(None, "")
    previous = 1
    while previous < auto.max:
        count = min(previous * 2, auto.max)
        if count not in points:
            return Probe(count, f"threads search: {count} threads, {_rise_text(points, previous)}")
        if not _better(points[previous], points[count], auto):
            return _refine(points, previous, count, auto)
        previous = count
    return Probe(None, "")


def _refine(points: Mapping[int, CellFigures], low: int, high: int, auto: ThreadsAuto) -> Probe:
    for _ in range(REFINE_TRIES):
        if high - low <= 1:
            break
        middle = (low + high) // 2
        if middle not in points:
            return Probe(middle, f"threads search: refining between {low} and {high} threads")
        if _better(points[low], points[middle], auto):
            low = middle
        else:
            high = middle
    return Probe(None, "")


def _better(low: CellFigures, high: CellFigures, auto: ThreadsAuto) -> bool:
    if not usable(low) or not usable(high) or not within_slo(high, auto.slo_p95_ms):
        return False
    return (high.mean or 0) > (low.mean or 0) * (1 + auto.rise_pct / 100)


def _rise_text(points: Mapping[int, CellFigures], count: int) -> str:
    below = count // 2
    if count == 1 or below not in points or not points[below].mean:
        return f"doubling from {count} thread{'s' if count > 1 else ''}"
    rise = ((points[count].mean or 0) / (points[below].mean or 1) - 1) * 100
    return f"since {below} → {count} threads rose {rise:+.0f} %"


def knee_conclusion(points: Mapping[int, CellFigures], auto: ThreadsAuto, unit: str) -> str:
    """`peak 21,050 tps at 4 threads (3 repeats); within noise of it: 4-8 threads; p95 ≤ 1
    ms up to 8 threads`."""
    finished = {t: c for t, c in points.items() if usable(c)}
    within = {t: c for t, c in finished.items() if within_slo(c, auto.slo_p95_ms)}
    # the percentile the runs measured (the plan's --percentile), as the tables head it
    pct = next((c.latency_label for c in finished.values()), "p95")
    if not within:
        if auto.slo_p95_ms is not None and finished:
            return f"{pct} above {auto.slo_p95_ms:g} ms from 1 thread on"
        return "no thread count finished"
    peak = max(within, key=lambda t: within[t].mean or 0)
    cell = within[peak]
    how = [_repeats_text(len(cell.values))]
    if auto.slo_p95_ms is None and cell.p95 is not None:
        how.insert(0, f"{pct} {cell.p95:.2f} ms")
    text = f"peak {cell.mean:,.0f} {unit} at {threads_text(peak)} ({', '.join(how)})"
    text += _noise_text(within, peak)
    if auto.slo_p95_ms is not None:
        text += f"; {pct} ≤ {auto.slo_p95_ms:g} ms up to {threads_text(max(within))}"
    if peak == auto.max and peak == max(points):
        text += f"; still rising at the upper bound of {threads_text(auto.max)}"
    return text


def _noise_text(within: Mapping[int, CellFigures], peak: int) -> str:
    close = within_noise(within, peak)
    if len(close) > 1:
        return f"; within noise of it: {close[0]}{verdicts.DASH}{close[-1]} threads"
    found = peak_verdicts(within, peak)
    if len(within) > 1 and len(within[peak].values) >= 2 and found:
        correction = next(iter(found.values())).correction
        return f"; significantly above the thread counts beside it ({correction})"
    return ""


def _repeats_text(count: int) -> str:
    return "1 repeat" if count == 1 else f"{count} repeats"
