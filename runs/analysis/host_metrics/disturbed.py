"""A repeat disturbed by other processes: a run markedly slower than its cell's other
repeats while processes other than the database and sysbench took the CPU (its
bottleneck is `other_processes`, a host was busy when it started, or other processes
took a share of a host's CPU over the run, whenever they came). Such a run is
singled out, and the verdict of its cell, which rests on it, says so.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runs.analysis.host_metrics.bottleneck import others_during
from runs.analysis.results import FINISHED_WELL, RunFigures

MARKEDLY = 0.75  # a quarter slower than the median of its cell's other repeats, or more


@dataclass(frozen=True)
class Disturbed:
    run: RunFigures
    others_tps: float  # the median of the cell's other repeats
    why: str  # what the other processes did, as the run's bottleneck said it

    @property
    def slower(self) -> float:
        return self.others_tps / float(self.run.throughput or 1)


def disturbed_runs(runs: Sequence[RunFigures]) -> list[Disturbed]:
    """The runs of each cell (series and threads) markedly slower than the cell's other
    repeats while other processes took a host's CPU."""
    cells: dict[tuple[str, int], list[RunFigures]] = {}
    for run in runs:
        if run.status in FINISHED_WELL and run.throughput:
            cells.setdefault((run.series_key, run.threads), []).append(run)
    found = []
    for repeats in cells.values():
        for run in repeats:
            why = _other_processes(run)
            if not why:
                continue  # most runs: no other process took the CPU, no median to take
            others = [float(r.throughput or 0) for r in repeats if r is not run]
            if not others:
                continue
            median = statistics.median(others)
            if float(run.throughput or 0) < MARKEDLY * median:
                found.append(Disturbed(run, median, why))
    return found


def _other_processes(run: RunFigures) -> str:
    limit = run.limit
    if limit.kind == "other_processes":
        return limit.evidence[0] if limit.evidence else "other processes took the CPU"
    if limit.busy_start:
        return limit.busy_start
    # Neighbours that came during the run, whatever else limited it (the fsyncs, say).
    during = others_during(run.host_summary)
    named = ", ".join(f"{role} host {host} {pct:.0f} %" for (role, host), pct in during.items())
    return f"other processes' share of the CPU over the run: {named}" if named else ""


def sentences(
    found: Sequence[Disturbed], labels: Mapping[str, str], baseline_key: str
) -> list[str]:
    """Each disturbed run in a sentence, naming the verdict that rests on it."""
    said = []
    for d in found:
        run = d.run
        label = labels.get(run.series_key, run.series_key) or "the cell"
        rests = (
            f"every verdict against the baseline at threads={run.threads} rests on it"
            if run.series_key == baseline_key
            else f"the verdict of {label} at threads={run.threads} rests on it"
        )
        said.append(
            f"{label} at threads={run.threads}: run {run.position + 1} was "
            f"{d.slower:.1f}x slower than its cell's other repeats ({run.throughput:,.0f} "
            f"against {d.others_tps:,.0f}) while other processes took the CPU ({d.why}); {rests}: "
            "rerun the cell on a quiet machine"
        )
    return said
