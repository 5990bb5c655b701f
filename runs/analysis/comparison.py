"""Two batches or two runs side by side: cell by cell, the difference and its verdict
(runs/analysis/noise/verdicts.py: Welch's test over the repeats, or over the interval samples
of two single runs), corrected for the number of cells on the page (Holm's correction,
multiplicity.py): a compare page of 16 cells is one family of tests.

Sides of different batches ran at different times, perhaps under different host load: a
difference between them may be the machine's drift, not the setting's. The comparison
says so, and points to the stronger test: an interleaved A/A or A/B in one batch.

Pure: no Django, no I/O."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from runs.analysis.noise import stats, verdicts
from runs.analysis.results import RunFigures
from runs.analysis.series import Point, Series, group_series
from runs.columns import HostSummary


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a batch or a single run."""

    key: str  # "b12" or "r345"
    label: str
    runs: list[RunFigures]
    host_busy_pct: float | None = None  # the server host's mean CPU busy %, when sampled
    # each axis's values in its plan's order (series.plan_order): configs as the user
    # listed them, not the alphabet's; empty: sorted by value
    order: Mapping[str, Sequence[str]] = field(default_factory=dict)

    @cached_property
    def series(self) -> list[Series]:
        """The side's runs grouped in series, once (the verdicts and the chart read them),
        in its plan's order."""
        return group_series(self.runs, self.order or None)


@dataclass(frozen=True)
class PairRow:
    label: str
    threads: int
    base: stats.Spread | None
    other: stats.Spread | None
    verdict: verdicts.Verdict | None
    base_latency: float | None
    other_latency: float | None
    # Each side's throughput in the cell, stats.ESTIMATOR as the verdict's ratio (the
    # quotient of the two), not the Spread's median or arithmetic mean.
    base_throughput: float | None = None
    other_throughput: float | None = None

    @property
    def sentence(self) -> str | None:
        """The verdict in a sentence; the label is `base → other` for two single series."""
        if self.verdict is None:
            return None
        base, _, other = self.label.partition(" → ")
        if not other:
            base, other = f"the baseline's {self.label}", self.label
        return verdicts.sentence(other, base, self.threads, self.verdict)

    @property
    def latency_diff_pct(self) -> float | None:
        if self.base_latency and self.other_latency is not None:
            return (self.other_latency - self.base_latency) / self.base_latency * 100
        return None


def compare_sides(base: Side, other: Side) -> list[PairRow]:
    """Cell by cell, how `other` differs from `base`. Cells match on threads and
    settings; when each side is a single series (say, two nights of one plan on two
    targets), on threads alone."""
    base_series, other_series = base.series, other.series
    by_threads_only = len(base_series) == 1 and len(other_series) == 1
    left = _cells(base_series, by_threads_only)
    right = _cells(other_series, by_threads_only)
    base_runs = {r.id: r for r in base.runs}
    other_runs = {r.id: r for r in other.runs}
    pair_label = _pair_label(base_series, other_series) if by_threads_only else ""
    rows = []
    for key in _in_order(left, right):
        a, b = left.get(key), right.get(key)
        label = pair_label or (a or b)[0]  # type: ignore[index]
        pa, pb = (a[1] if a else None), (b[1] if b else None)
        rows.append(
            PairRow(
                label=label,
                threads=key[0],
                base=stats.describe(pa.values) if pa and pa.values else None,
                other=stats.describe(pb.values) if pb and pb.values else None,
                verdict=(
                    verdicts.compare_runs(
                        [base_runs[i] for i in pa.run_ids], [other_runs[i] for i in pb.run_ids]
                    )
                    if pa and pb
                    else None
                ),
                base_latency=pa.latency_ms if pa else None,
                other_latency=pb.latency_ms if pb else None,
                base_throughput=pa.mean if pa else None,
                other_throughput=pb.mean if pb else None,
            )
        )
    return rows


def _in_order(
    left: Mapping[tuple[int, str], Any], right: Mapping[tuple[int, str], Any]
) -> list[tuple[int, str]]:
    """The cells by threads, then in the order of the series: the base side's, then the
    other's it lacks (each side's in its plan's order)."""
    rank: dict[str, int] = {}
    for _, key in [*left, *right]:
        rank.setdefault(key, len(rank))
    return sorted(set(left) | set(right), key=lambda cell: (cell[0], rank[cell[1]]))


def _cells(series: list[Series], by_threads_only: bool) -> dict[tuple[int, str], tuple[str, Point]]:
    return {
        (p.threads, "" if by_threads_only else s.key): (s.label, p)
        for s in series
        for p in s.points
    }


def _pair_label(base: list[Series], other: list[Series]) -> str:
    a, b = base[0].label, other[0].label
    return a if a == b else f"{a} → {b}"


# --- a page of sides: one family of tests, and what the times and loads say ----------------

STRONGER_TEST = (
    "an interleaved A/A or A/B in one batch (both settings as values of one axis of a plan, "
    "in interleaved order) is the stronger test"
)
LOAD_APART_PCT = 10.0  # server hosts' busy % this far apart: not the same conditions


@dataclass(frozen=True)
class Pair:
    """One side set against the baseline: its cells, and why the comparison may mislead."""

    side: Side
    rows: list[PairRow]
    caveats: list[str]


def compare_all(sides: Sequence[Side]) -> list[Pair]:
    """Every other side against the first, cell by cell, the verdicts of the whole page
    corrected together (Holm)."""
    if len(sides) < 2:
        return []
    base = sides[0]
    pairs = [Pair(side, compare_sides(base, side), caveats(base, side)) for side in sides[1:]]
    rows = [row for pair in pairs for row in pair.rows if row.verdict is not None]
    fixed = verdicts.corrected([row.verdict for row in rows if row.verdict is not None])
    replaced = {id(row): v for row, v in zip(rows, fixed, strict=True)}
    return [
        Pair(
            pair.side,
            [dataclasses.replace(r, verdict=replaced.get(id(r), r.verdict)) for r in pair.rows],
            pair.caveats,
        )
        for pair in pairs
    ]


def caveats(base: Side, other: Side) -> list[str]:
    """`ran at different times ...`, `under different host load ...`: what makes a
    comparison across batches weaker than one inside a batch."""
    found = []
    spans = _span(base.runs), _span(other.runs)
    if spans[0] and spans[1] and (spans[0][1] < spans[1][0] or spans[1][1] < spans[0][0]):
        found.append(
            f"the two ran at different times ({_when(spans[0])} and {_when(spans[1])}): a "
            f"change of the machine between them counts as a difference; {STRONGER_TEST}"
        )
    loads = base.host_busy_pct, other.host_busy_pct
    if loads[0] is not None and loads[1] is not None and abs(loads[0] - loads[1]) > LOAD_APART_PCT:
        found.append(
            f"under different host load (the server host {loads[0]:.0f} % busy against "
            f"{loads[1]:.0f} %); {STRONGER_TEST}"
        )
    return found


def _span(runs: Iterable[RunFigures]) -> tuple[datetime, datetime] | None:
    times = [
        (r.started_at, r.finished_at)
        for r in runs
        if r.started_at is not None and r.finished_at is not None
    ]
    if not times:
        return None
    return min(t[0] for t in times), max(t[1] for t in times)


def _when(span: tuple[datetime, datetime]) -> str:
    return f"{span[0]:%Y-%m-%d %H:%M}\N{EN DASH}{span[1]:%H:%M}"


def host_busy_pct(summaries: Iterable[Mapping[str, Any]]) -> float | None:
    """The server host's mean busy % over runs' host summaries (`Run.host_summary`), None
    when no run sampled it."""
    servers = [h for s in summaries for h in HostSummary.load(s).of_role("server")]
    busy = [host.busy_pct for host in servers if host.busy_pct is not None]
    return statistics.fmean(busy) if busy else None
