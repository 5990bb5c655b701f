"""The live page's grid of a batch: series by thread count, each cell its runs counted by
status. Read from the runs grouped by cell and status (as many groups as the batch has
cells, whatever its repeats), so that a batch of thousands of runs draws a grid as small
as one of twenty."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runs.analysis.results import RunFigures
from runs.analysis.series import Series, group_series

# The statuses in a grid cell, in the order shown.
GRID_STATUSES = ("running", "preparing", "waiting", "queued", "done", "failed", "interrupted",
                 "cancelled", "skipped")  # fmt: skip


@dataclass(frozen=True)
class GridCell:
    """A cell of the grid: its runs counted by status, and its run when it has only one
    (a cell of one run links to it)."""

    counts: dict[str, int]
    run_id: int | None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run_id, "counts": self.counts}


@dataclass(frozen=True)
class GridRow:
    series: Series
    cells: list[GridCell | None]  # one per thread count; None where no run has them


@dataclass(frozen=True)
class Grid:
    threads: list[int]
    rows: list[GridRow]
    more_series: int  # series left out of the rows (beyond max_rows)

    def cells_json(self) -> list[dict[str, Any] | None]:
        """The cells in the page's order (row by row), for its poll to refresh them."""
        return [c.to_json() if c else None for row in self.rows for c in row.cells]


def counted_grid(
    groups: Sequence[tuple[RunFigures, int, int]],
    *,
    max_rows: int,
    axes_order: Mapping[str, Sequence[str]] | None = None,
) -> Grid:
    """`groups`: (one run of the group, the group's number of runs, its lowest run id)
    for each cell and status. The first `max_rows` series are laid out, in the plan's
    `axes_order` of each axis's values when given (series.plan_order)."""
    cells: dict[tuple[str, int], dict[str, int]] = {}
    firsts: dict[tuple[str, int], int] = {}
    one_of_each: dict[str, RunFigures] = {}  # a run of each series: their order and names
    for run, count, first_id in groups:
        series_key = run.series_key
        one_of_each.setdefault(series_key, run)
        key = (series_key, run.threads)
        counts = cells.setdefault(key, {})
        counts[run.status] = counts.get(run.status, 0) + count
        firsts[key] = min(firsts.get(key, first_id), first_id)
    series = group_series(one_of_each.values(), axes_order)
    threads = sorted({t for _, t in cells})
    order = {status: i for i, status in enumerate(GRID_STATUSES)}

    def cell(key: tuple[str, int]) -> GridCell | None:
        if key not in cells:
            return None
        counts = dict(sorted(cells[key].items(), key=lambda kv: order.get(kv[0], len(order))))
        return GridCell(counts, firsts[key] if sum(counts.values()) == 1 else None)

    rows = [GridRow(s, [cell((s.key, t)) for t in threads]) for s in series[:max_rows]]
    return Grid(threads, rows, max(0, len(series) - max_rows))
