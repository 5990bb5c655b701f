"""Two batches or two runs side by side: cell by cell, the difference and its verdict
(runs/analysis/verdicts.py: Welch's test over the repeats, or over the interval samples
of two single runs).

Pure: no Django, no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from runs.analysis import stats, verdicts
from runs.analysis.results import Point, RunFigures, Series, group_series


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a batch or a single run."""

    key: str  # "b12" or "r345"
    label: str
    runs: list[RunFigures]


@dataclass(frozen=True)
class PairRow:
    label: str
    threads: int
    base: stats.Spread | None
    other: stats.Spread | None
    verdict: verdicts.Verdict | None
    base_latency: float | None
    other_latency: float | None

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
    base_series, other_series = group_series(base.runs), group_series(other.runs)
    by_threads_only = len(base_series) == 1 and len(other_series) == 1
    left = _cells(base_series, by_threads_only)
    right = _cells(other_series, by_threads_only)
    base_runs = {r.id: r for r in base.runs}
    other_runs = {r.id: r for r in other.runs}
    pair_label = _pair_label(base_series, other_series) if by_threads_only else ""
    rows = []
    for key in sorted(set(left) | set(right)):
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
            )
        )
    return rows


def _cells(series: list[Series], by_threads_only: bool) -> dict[tuple[int, str], tuple[str, Point]]:
    return {
        (p.threads, "" if by_threads_only else s.key): (s.label, p)
        for s in series
        for p in s.points
    }


def _pair_label(base: list[Series], other: list[Series]) -> str:
    a, b = base[0].label, other[0].label
    return a if a == b else f"{a} → {b}"
