"""What the live batch page polls and shows: honest counts for a cancelled batch, the
running cell in the progress and the remaining time, a finished run's figures."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta

import pytest
from django.utils import timezone

from runs.execution import locks
from runs.models import Batch, Run, Status

pytestmark = pytest.mark.django_db


def runs_of(batch: Batch, statuses: Sequence[str], **fields) -> list[Run]:
    return [
        Run.objects.create(
            batch=batch, position=i, round=0, cell_key=f"c{i}", threads=1, status=status,
            expected_duration_s=10.0, **fields,
        )
        for i, status in enumerate(statuses)
    ]  # fmt: skip


def test_a_cancelled_batch_counts_its_runs_as_they_ended(client_in, make_batch):
    batch = make_batch(status=Status.CANCELLED)
    runs_of(batch, [Status.CANCELLED] + [Status.SKIPPED] * 7)

    home = client_in.get("/").content.decode()
    page = client_in.get(f"/batches/{batch.pk}/").content.decode()
    progress = client_in.get(f"/batches/{batch.pk}/progress").json()

    assert "0 / 8 · 1 cancelled · 7 skipped" in home
    assert "8 / 8" not in home
    assert '<span id="batch-counts" class="muted">1 cancelled, 7 skipped</span>' in page
    assert progress["counts_text"] == "1 cancelled, 7 skipped"
    assert 'id="cancel-form"' not in page


def test_the_list_says_what_a_queued_batch_waits_for_now(client_in, make_batch):
    holder = make_batch(status=Status.RUNNING)
    queued = make_batch(status=Status.QUEUED, waiting_for="target busy with batch 1")
    ended = make_batch(status=Status.DONE, waiting_for="a quiet host")
    assert locks.locks_acquire(batch=holder) == ""

    home = client_in.get("/").content.decode()

    row = re.search(rf'<a href="/batches/{queued.pk}/">.*?</tr>', home, re.S)
    assert row and f"is busy with batch {holder.pk})" in row.group(0)
    assert "target busy with batch 1" not in home  # the stale reason is read again
    assert "(a quiet host)" in home  # a batch that is not queued says what it stored
    assert f'value="b{ended.pk}"' in home


def test_progress_and_remaining_time_count_the_running_cell(client_in, make_batch):
    batch = make_batch(status=Status.RUNNING)
    done, running, _queued = runs_of(batch, [Status.DONE, Status.RUNNING, Status.QUEUED])
    started = timezone.now() - timedelta(seconds=4)
    Run.objects.filter(pk=running.pk).update(started_at=started)
    Run.objects.filter(pk=done.pk).update(
        summary={"tps": 812.5, "qps": 16250.0, "latency_pct_ms": 3.1}
    )

    progress = client_in.get(f"/batches/{batch.pk}/progress").json()
    elapsed_s = (timezone.now() - started).total_seconds()

    # the queued run's 10 s, and what the running one has left of its 10 s (at most 6: it
    # started 4 s before the request, which a loaded machine may answer seconds later)
    assert 10 < progress["remaining_s"] <= 10 + 6
    assert 0.4 <= progress["running_share"] <= elapsed_s / 10
    assert progress["counts_text"] == ""
    assert progress["figures"] == {
        str(done.pk): {"tps": 812.5, "qps": 16250.0, "latency_pct_ms": 3.1, "status_text": "done"}
    }


def cells_of(batch: Batch, count: int, *, repeats: int = 1, status=Status.QUEUED) -> list[Run]:
    """`count` cells (thread counts 1..count) of `repeats` runs each, in round order."""
    return Run.objects.bulk_create(
        Run(
            batch=batch, position=r * count + c, round=r, cell_key=f'{{"threads": {c + 1}}}',
            threads=c + 1, status=status, expected_duration_s=10.0,
        )
        for r in range(repeats)
        for c in range(count)
    )  # fmt: skip


def test_the_batch_page_shows_a_page_of_runs_and_page_2_on_asking(client_in, make_batch):
    batch = make_batch(status=Status.RUNNING)
    runs = cells_of(batch, 75)

    first = client_in.get(f"/batches/{batch.pk}/").content.decode()
    second = client_in.get(f"/batches/{batch.pk}/?page=2").content.decode()

    def rows(html: str) -> list[int]:
        table = html[html.index('id="runs-table"') :]
        return [int(r) for r in re.findall(r'<tr data-run="(\d+)">', table)]

    assert rows(first) == [r.pk for r in runs[:50]]  # a page of 50 runs
    assert rows(second) == [r.pk for r in runs[50:]]
    assert "51\u201375 of 75" in second and "page 2 of 2" in second
    assert 'href="?page=2#runs" rel="next"' in first and 'rel="next"' not in second
    # an out-of-range page is the last one
    assert rows(client_in.get(f"/batches/{batch.pk}/?page=9").content.decode()) == rows(second)


def test_the_batch_page_opens_on_the_page_of_the_current_run(client_in, make_batch):
    batch = make_batch(status=Status.RUNNING)
    runs = cells_of(batch, 250)
    Run.objects.filter(pk__in=[r.pk for r in runs[:230]]).update(status=Status.DONE)
    Run.objects.filter(pk=runs[230].pk).update(status=Status.RUNNING)

    page = client_in.get(f"/batches/{batch.pk}/").content.decode()

    assert f'<tr data-run="{runs[230].pk}">' in page and "page 5 of 5" in page
    assert f'<tr data-run="{runs[0].pk}">' not in page


def test_the_progress_tells_the_runs_of_the_page_asked_for(client_in, make_batch):
    batch = make_batch(status=Status.RUNNING)
    runs = cells_of(batch, 150)
    Run.objects.filter(pk=runs[120].pk).update(
        status=Status.DONE, summary={"tps": 812.5, "qps": 16250.0, "latency_pct_ms": 3.1}
    )

    first = client_in.get(f"/batches/{batch.pk}/progress").json()
    second = client_in.get(f"/batches/{batch.pk}/progress?page=3").json()

    assert list(first["runs"]) == [str(r.pk) for r in runs[:50]] and first["figures"] == {}
    assert list(second["runs"]) == [str(r.pk) for r in runs[100:]]
    assert second["figures"] == {
        str(runs[120].pk): {"tps": 812.5, "qps": 16250.0, "latency_pct_ms": 3.1,
                            "status_text": "done"}
    }  # fmt: skip
    assert (second["total"], second["finished"], second["counts"]) == (
        150,
        1,
        {"done": 1, "queued": 149},
    )
    assert second["remaining_s"] == 149 * 10.0


def test_the_grid_counts_each_cells_repeats_and_links_a_cell_of_one_run(client_in, make_batch):
    batch = make_batch(status=Status.RUNNING)
    repeated = cells_of(batch, 2, repeats=30)  # 2 cells of 30 runs: 60 runs, 2 cells drawn
    Run.objects.filter(pk__in=[r.pk for r in repeated[:4]]).update(status=Status.DONE)
    alone = Run.objects.create(
        batch=batch, position=60, round=0, cell_key='{"threads": 8}', threads=8,
        status=Status.QUEUED,
    )  # fmt: skip

    page = client_in.get(f"/batches/{batch.pk}/").content.decode()
    grid = page[page.index('id="matrix-grid"') : page.index("</table>", page.index("matrix-grid"))]
    progress = client_in.get(f"/batches/{batch.pk}/progress").json()

    assert grid.count('class="cell num" data-cell') == 3
    assert '<span class="dot queued" title="28 queued"></span>28' in grid  # 1 thread
    assert '<span class="dot done" title="2 done"></span>2' in grid
    assert f'href="/runs/{alone.pk}/" class="dot queued" data-run="{alone.pk}"' in grid
    assert progress["grid"] == [
        {"run": None, "counts": {"queued": 28, "done": 2}},
        {"run": None, "counts": {"queued": 28, "done": 2}},
        {"run": alone.pk, "counts": {"queued": 1}},
    ]
