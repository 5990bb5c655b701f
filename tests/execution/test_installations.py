"""Two installations on one Redis: each worker takes only its own installation's batches.

Celery's keys (the `benchmarks` queue among them) live under the installation's name
(benchdash/broker.py). Two real worker processes of two installations share this slot's
Redis; a batch is handed to installation A's queue while only B's worker runs, then one
to B's: B takes its own and leaves A's (a shared list would have given B the first, A's),
which A's worker takes once it starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings

from benchdash.celery import app
from runs.execution import liveness
from runs.models import Batch
from runs.services import queue
from tests import stored
from tests.helpers import wait_until
from tests.processes import WorkerProcess

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def hand_to(installation: str, batch: Batch) -> None:
    """The batch to `installation`'s workers, as its web would hand it over: a new broker
    connection, whose channel takes the installation's keys when it opens."""
    with override_settings(BENCHDASH_INSTALLATION=installation), app.connection_for_write() as c:
        app.send_task(queue.BATCH_EXECUTE, args=[batch.pk], connection=c)


def claimed_by(batch: Batch) -> str:
    batch.refresh_from_db(fields=["worker"])
    return batch.worker


def worker_beats(installation: str, name: str) -> bool:
    with override_settings(BENCHDASH_INSTALLATION=installation):
        return any(n.startswith(f"worker:{name}@") for n in liveness.heartbeats_read())


def test_two_installations_on_one_redis_each_take_only_their_own_batches(
    transactional_db, make_plan, tmp_path: Path
):
    plan = make_plan()
    for_a, for_b = stored.bare_batch(plan), stored.bare_batch(plan)
    workers = [
        WorkerProcess(tmp_path / "worker-b.log", name="inst-b", env={"BENCHDASH_INSTALLATION": "b"})
    ]
    try:
        wait_until(lambda: worker_beats("b", "inst-b"), timeout=120, what="B's worker")
        hand_to("a", for_a)
        hand_to("b", for_b)
        wait_until(lambda: bool(claimed_by(for_b)), timeout=120, what="B's batch claimed")
        assert claimed_by(for_b).startswith("inst-b@")
        assert claimed_by(for_a) == ""  # first in line, but not B's

        env = {"BENCHDASH_INSTALLATION": "a"}
        workers.append(WorkerProcess(tmp_path / "worker-a.log", name="inst-a", env=env))
        wait_until(lambda: bool(claimed_by(for_a)), timeout=120, what="A's batch claimed")
        assert claimed_by(for_a).startswith("inst-a@")
        assert claimed_by(for_b).startswith("inst-b@")
    finally:
        for worker in workers:
            worker.stop()
