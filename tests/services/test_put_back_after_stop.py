"""`make stop`'s put-back (runs/services/restarts.py servers_put_back_after_stop) keeps the
sweeper's two guards: a server another worker's batch benchmarks now is never restarted
under it, and a batch finished longer ago than the put-back window is not tried again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from runs.models import Batch, Status, Target
from runs.services import restarts

STOPPED = "benchdash@stopped-host"


@pytest.fixture
def target(db) -> Target:
    return Target.objects.create(
        name="db-left", engine="mariadb", host="127.0.0.1", port=1, database="sbtest",
        user="bench", restart_mode="managed",
    )  # fmt: skip


def left_changed(target: Target, **fields: object) -> Batch:
    """A batch of the stopped worker that left `target` running another config."""
    values: dict[str, object] = {
        "target": target, "params": {}, "seed": 1, "launched_by": "api",
        "status": Status.RUNNING, "worker": STOPPED,
        "put_back": {str(target.pk): {"running": {"install": "10.11", "config": "b0e0"}}},
    }  # fmt: skip
    values.update(fields)
    return Batch.objects.create(**values)


def test_a_server_another_workers_batch_uses_now_is_left_as_it_is(target):
    killed = left_changed(target)
    Batch.objects.create(
        target=target, params={}, seed=2, launched_by="api", status=Status.RUNNING,
        worker="benchdash@another-host",
    )  # fmt: skip

    problems = restarts.servers_put_back_after_stop(worker=STOPPED)

    assert problems == {killed.pk: "left as it is: another batch uses the server now"}
    killed.refresh_from_db()
    assert killed.put_back[str(target.pk)]["running"]["config"] == "b0e0"  # nothing touched


def test_a_batch_finished_beyond_the_put_back_window_is_not_tried_again(target):
    long_ago = timezone.now() - restarts.PUT_BACK_WITHIN - timedelta(hours=1)
    left_changed(target, status=Status.DONE, finished_at=long_ago)

    assert restarts.servers_put_back_after_stop(worker=STOPPED) == {}
