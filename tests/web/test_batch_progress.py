"""What the live batch page polls and shows: honest counts for a cancelled batch, the
running cell in the progress and the remaining time, a finished run's figures."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from django.utils import timezone

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
