"""The live page of a batch, flat in the batch's size: a page of its runs at a time (the
table, and what its poll refreshes) and its grid counted by PostgreSQL, so that a batch
of thousands of runs costs what one of twenty costs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Min

from runs.analysis import batch_results, grid, results, run_facts
from runs.analysis.series import plan_order
from runs.frozen import FrozenPlan
from runs.models import FINISHED_STATUSES, Batch, Run
from runs.services.selectors import Progress, batch_runs

# The live page's runs table shows this many runs a page, and its grid this many series.
RUNS_PER_PAGE = 50
GRID_SERIES = 40


def batch_runs_page(batch: Batch, page: int) -> list[Run]:
    """The runs of the live page's page `page` (from 1): positions in order, read by the
    (batch, position) index."""
    start = (max(1, page) - 1) * RUNS_PER_PAGE
    return list(batch_runs(batch)[start : start + RUNS_PER_PAGE])


def batch_page_of(progress: Progress) -> int:
    """The page that holds the current run (the first when none runs)."""
    if progress.current is None:
        return 1
    return progress.current.position // RUNS_PER_PAGE + 1


def batch_grid(batch: Batch) -> grid.Grid:
    """The batch's grid (runs/analysis/grid.py) from its runs grouped by cell and status."""
    groups = (
        batch.runs.order_by()
        .values_list("cell_key", "settings", "threads", "status", "target_id", "target__name")
        .annotate(n=Count("id"), first=Min("id"))
    )
    return grid.counted_grid(
        [
            (
                results.RunFigures(
                    id=first,
                    position=0,
                    round=0,
                    threads=threads,
                    settings=dict(settings or {}),
                    axis_options=_grid_axes(cell_key, target_id, target_name),
                    cell_axes=results.cell_axes(cell_key),
                    status=status,
                    summary={},
                ),
                n,
                first,
            )
            for cell_key, settings, threads, status, target_id, target_name, n, first in groups
        ],
        max_rows=GRID_SERIES,
        axes_order=_plan_order(batch),
    )


def _grid_axes(cell_key: str, target_id: int | None, target_name: str | None) -> dict[str, str]:
    """A cell's option-axis values and, on a servers axis, its target by name: what
    results.run_axes reads of a run, so that each target is a row of its own as it is a
    series of the results (a cell's key names its target by id only)."""
    axes = results.axis_options(cell_key)
    if results.target_on_axis(cell_key):
        axes[results.TARGET] = target_name if target_name is not None else f"target {target_id}"
    return axes


def _plan_order(batch: Batch) -> dict[str, list[str]]:
    """The plan's order of each axis's values: the grid's rows as the results' series."""
    plan = FrozenPlan.from_params(batch.params)
    return plan_order(
        plan.server_settings, plan.option_axes, plan.targets, plan.servers, plan.tests
    )


def batch_latency_label(batch: Batch) -> str:
    """`p99`: the percentile the plan asked sysbench for, the runs table's latency heading
    as the results' tables head theirs (the runs measured it, finished or not yet)."""
    return batch_results.latency_label([], FrozenPlan.from_params(batch.params).options)


@dataclass(frozen=True)
class PageRuns:
    """The runs of a page of the live page: each one's status, and the figures of those
    that finished."""

    statuses: dict[int, str]
    figures: dict[int, dict[str, Any]]


def batch_page_runs(batch: Batch, page: int = 1) -> PageRuns:
    """The status of each run of the live page's page `page` and, for those that finished,
    tps, qps, latency and their status with the outcome ("done (forced shutdown, 200
    unfinished)"), for its rows: one query of at most RUNS_PER_PAGE rows."""
    start = (max(1, page) - 1) * RUNS_PER_PAGE
    runs = batch.runs.filter(position__gte=start, position__lt=start + RUNS_PER_PAGE)
    rows = runs.order_by("position").values_list(
        "id",
        "status",
        "summary__tps",
        "summary__qps",
        "summary__latency_pct_ms",
        "outcome",
        "summary__unfinished_transactions",
    )
    statuses, figures = {}, {}
    for run_id, status, tps, qps, latency, outcome, unfinished in rows:
        statuses[run_id] = status
        if status in FINISHED_STATUSES:
            figures[run_id] = {
                "tps": tps,
                "qps": qps,
                "latency_pct_ms": latency,
                "status_text": run_facts.status_text(status, outcome, unfinished),
            }
    return PageRuns(statuses, figures)
