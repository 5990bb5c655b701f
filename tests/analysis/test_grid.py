"""The live page's grid from runs grouped by cell and status: one cell a (series, thread
count), its runs counted, its run linked when it has one."""

from __future__ import annotations

from runs.analysis.grid import counted_grid
from runs.analysis.results import RunFigures


def group(threads: int, flush: str, status: str, n: int, first: int):
    run = RunFigures(
        id=first, position=0, round=0, threads=threads,
        settings={"innodb_flush_log_at_trx_commit": flush}, axis_options={}, status=status,
        summary={},
    )  # fmt: skip
    return run, n, first


def test_a_grid_counts_the_repeats_of_each_cell_by_status_in_the_order_shown():
    grid = counted_grid(
        [group(4, "1", "done", 3, 10), group(4, "1", "running", 1, 40),
         group(1, "1", "queued", 4, 2), group(1, "2", "queued", 1, 7)],
        max_rows=10,
    )  # fmt: skip

    assert grid.threads == [1, 4]
    assert [row.series.label for row in grid.rows] == ["flush=1", "flush=2"]
    flush1, flush2 = grid.rows
    assert flush1.cells[0] is not None and flush1.cells[0].counts == {"queued": 4}
    assert flush1.cells[1] is not None and flush1.cells[1].counts == {"running": 1, "done": 3}
    assert flush1.cells[1].run_id is None and flush1.cells[1].total == 4
    assert flush2.cells[0] is not None and flush2.cells[0].run_id == 7  # its one run, linked
    assert flush2.cells[1] is None  # no run of flush=2 with 4 threads
    assert grid.cells_json() == [
        {"run": None, "counts": {"queued": 4}},
        {"run": None, "counts": {"running": 1, "done": 3}},
        {"run": 7, "counts": {"queued": 1}},
        None,
    ]


def test_a_grid_of_many_series_lays_out_the_first_and_counts_the_rest():
    grid = counted_grid(
        [group(t, str(f), "queued", 1, f * 10 + t) for f in range(12) for t in (1, 2)], max_rows=5
    )
    assert len(grid.rows) == 5 and grid.more_series == 7
    assert len(grid.cells_json()) == 10
