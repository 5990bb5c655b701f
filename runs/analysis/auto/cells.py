"""What the runs of one cell so far say, as every automatic mode reads them (CellFigures),
and what the modes share: the next probe of a search, the line a search walks along.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats as scipy_stats

from runs.analysis.noise import stats
from runs.analysis.results import FINISHED_WELL, NOT_RUN, RunFigures, series_label
from runs.columns import RunSummary

QUEUE_FLOOR = 10  # a few events waiting in sysbench's --rate queue is normal at any rate


@dataclass(frozen=True)
class CellFigures:
    """The repeats of one cell reduced to what the searches read."""

    attempts: int  # runs of the cell, finished or not, failed ones too
    values: tuple[float, ...]  # throughput of the repeats that finished well
    # the latency percentile (p95 unless the plan asked another), ms: stats.ESTIMATOR of
    # the repeats', as their throughput (mean) and the tables'
    p95: float | None
    # what --rate achieved: stats.ESTIMATOR over the repeats of each whole run's rate after
    # the warmup (sysbench's steady report), not of one interval's
    achieved: float | None
    queue_max: int | None  # the longest queue that lasted more than one interval
    queue_growing: int | None  # a queue at least twice as long at the end as early on
    failure: str  # the error of a failed repeat, "" when none failed
    # each run of the cell on its own (empty for a single run: the cell is its one try),
    # so that a search can count how many tries held a point rather than pool them
    tries: tuple[CellFigures, ...] = ()
    latencies: tuple[float, ...] = ()  # the latency percentile (ms) of the same repeats
    latency_label: str = "p95"  # the percentile the runs measured: p95, p99 ...

    @property
    def mean(self) -> float | None:
        """The cell's throughput: stats.ESTIMATOR of its repeats, the figure the results'
        tables show for it, so that a search's peak is the tables' peak."""
        return stats.geometric_mean(self.values)

    @property
    def pending(self) -> bool:
        return self.attempts > len(self.values) and not self.failure

    @property
    def each(self) -> tuple[CellFigures, ...]:
        """The tries of the cell, one per run that has run."""
        return self.tries or (self,)


def cell_figures(runs: Sequence[RunFigures]) -> CellFigures:
    good = [r for r in runs if r.status in FINISHED_WELL and r.throughput is not None]
    failed = [r for r in runs if r.status not in FINISHED_WELL and r.status not in NOT_RUN]
    p95 = [v for r in good if (v := r.latency_ms) is not None]
    achieved = [float(r.throughput or 0) for r in good]
    queues = [q for r in good if (q := _queue_held(r.figures)) is not None]
    growing = [n for r in good if (n := _queue_growing(r.figures)) is not None]
    ran = [r for r in runs if r.status not in NOT_RUN]
    return CellFigures(
        attempts=len(runs),
        values=tuple(float(r.throughput or 0) for r in good),
        p95=stats.geometric_mean(p95),
        achieved=stats.geometric_mean(achieved),
        queue_max=max(queues) if queues else None,
        queue_growing=max(growing) if growing else None,
        failure=(failed[0].error or failed[0].status) if failed else "",
        tries=tuple(cell_figures([r]) for r in ran) if len(ran) > 1 else (),
        latencies=tuple(p95),
        latency_label=_latency_label(good),
    )


def _latency_label(runs: Sequence[RunFigures]) -> str:
    pct = next((p for r in runs if (p := r.figures.latency_pct) is not None), 95.0)
    return f"p{pct:g}"


def _queue_held(summary: RunSummary) -> int | None:
    # the longest queue that lasted more than one interval (summary.py); runs summed up
    # before it was recorded have only their longest queue
    if summary.queue_stall_max is not None:
        return summary.queue_stall_max
    return summary.queue_length_max


def _queue_growing(summary: RunSummary) -> int | None:
    last, early = summary.queue_length_last, summary.queue_length_early_max
    if last is None or early is None or last <= 2 * early:
        return None
    before_last = summary.queue_length_before_last
    if before_last is not None and before_last <= QUEUE_FLOOR:
        return None  # a queue of the last second alone: a stall must last two intervals
    return last


def half_width_pct(values: Sequence[float]) -> float | None:
    """The half-width of the 95 % confidence interval of the mean, in % of the mean."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean == 0:
        return None
    t = float(scipy_stats.t.ppf(0.975, len(values) - 1))
    return t * statistics.stdev(values) / math.sqrt(len(values)) / mean * 100


@dataclass(frozen=True)
class Probe:
    """The next value to measure (threads or rate) and why; value None: the search is over.
    repeats: how many runs of it (0: the plan's usual number)."""

    value: int | None
    reason: str
    repeats: int = 0


def usable(cell: CellFigures) -> bool:
    return cell.mean is not None and not cell.failure


def within_slo(cell: CellFigures, slo: float | None) -> bool:
    return slo is None or (cell.p95 is not None and cell.p95 <= slo)


def threads_text(count: int) -> str:
    return "1 thread" if count == 1 else f"{count} threads"


def line_label(run: RunFigures, without: str) -> str:
    """A search line's name: the cell's settings and option values but the searched one."""
    options = {k: v for k, v in run.axis_options.items() if k != without}
    label = series_label(run.settings, options, run.cell_axes)
    return label if without == "threads" else f"{label}, {threads_text(run.threads)}"
