"""The live page of a two-target batch (issue 47): its grid has a row per target and
setting, named by the target, in the plan's order, and its runs table names each run's
target. Runs stored as a launch of such a plan leaves them (cells.Cell keys), no worker."""

from __future__ import annotations

import re

import pytest

from runs.models import Batch, Run, Status, Target
from runs.services import live_page
from runs.sysbench.cells import Cell

pytestmark = pytest.mark.django_db

FLUSH = "innodb_flush_log_at_trx_commit"


def two_target_batch(make_batch, stored_target: Target) -> tuple[Batch, Target, Target]:
    """db-b before db-1 in the plan (the baseline is the plan's first, not the first by
    name), flush 1 then 0, 1 and 2 threads, two repeats; the first round done."""
    other = Target.objects.create(name="db-b", engine="mariadb", host="127.0.0.1", port=3998)
    targets = [other, stored_target]
    batch = make_batch(
        status=Status.RUNNING,
        params={
            "targets": [{"id": t.pk, "name": t.name} for t in targets],
            "server_settings": {FLUSH: ["1", "0"]},
            "threads": [1, 2],
        },
    )
    cells = [
        (round_, target, flush, threads)
        for round_ in (0, 1)
        for target in targets
        for flush in ("1", "0")
        for threads in (1, 2)
    ]
    Run.objects.bulk_create(
        Run(
            batch=batch, position=i, round=round_, threads=threads, target=target,
            settings={FLUSH: flush}, expected_duration_s=1.0,
            status=Status.DONE if round_ == 0 else Status.QUEUED,
            cell_key=Cell(
                position=i, round=round_, threads=threads, settings={FLUSH: flush},
                options={"threads": threads}, dataset=(), target=target.pk, axes=("target",),
            ).key(),
        )
        for i, (round_, target, flush, threads) in enumerate(cells)
    )  # fmt: skip
    return batch, other, stored_target


def test_the_grid_of_a_two_target_batch_has_a_row_per_target_and_setting(make_batch, stored_target):
    batch, _, _ = two_target_batch(make_batch, stored_target)

    grid = live_page.batch_grid(batch)

    assert grid.threads == [1, 2]
    assert [row.series.label for row in grid.rows] == [
        "target=db-b flush=1",
        "target=db-1 flush=1",
        "target=db-b flush=0",
        "target=db-1 flush=0",
    ]
    for row in grid.rows:  # each cell: its own target's two repeats, one done
        assert [c.counts if c else None for c in row.cells] == [{"queued": 1, "done": 1}] * 2


def test_the_batch_page_names_each_runs_target_in_its_grid_and_runs_table(
    client_in, make_batch, stored_target
):
    batch, other, first = two_target_batch(make_batch, stored_target)

    page = client_in.get(f"/batches/{batch.pk}/").content.decode()
    progress = client_in.get(f"/batches/{batch.pk}/progress").json()

    grid = page[page.index('id="matrix-grid"') : page.index("</table>", page.index("matrix-grid"))]
    assert grid.count("target=db-b") == 2 and grid.count("target=db-1") == 2
    assert len(progress["grid"]) == 8  # 4 rows x 2 thread counts, as the page draws them
    table = page[page.index('id="runs-table"') :]
    cells = re.findall(r'<tr data-run="\d+">.*?<td class="mono">(.*?)</td>', table, re.S)
    runs = Run.objects.filter(batch=batch).order_by("position")
    assert len(cells) == len(runs) == 16
    for cell, run in zip(cells, runs, strict=True):
        name = (other if run.target_id == other.pk else first).name
        assert f"target={name} " in cell
