"""A restart in progress is a stage of the batch (status running, no end yet, finished in
its place), and a cancel during the warm-up after it ends the warm-up at once, not at its
end: the batch ends cancelled, the warm-up stage says it was cut short, the original
config is put back. On a managed mariadbd of the test's own."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from runs.models import Batch, Status
from runs.services import batches
from tests.execution.test_restarts import METHOD, make_plan, managed_instance, managed_target
from tests.helpers import global_variable, wait_for_batch
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

WARM_S = 120  # far longer than the test: a warm-up waited out would fail it


@pytest.fixture
def managed() -> Iterator[PrivateMariaDB]:
    yield from managed_instance(PrivateMariaDB())


def stages_until(batch: Batch, found, timeout: float = 120) -> list[dict]:
    """The batch's stages as soon as `found(stages)` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        batch.refresh_from_db()
        if found(batch.stages):
            return list(batch.stages)
        assert batch.status not in (Status.DONE, Status.FAILED, Status.CANCELLED), batch.stages
        time.sleep(0.05)
    raise AssertionError(f"not seen within {timeout} s: {batch.stages}")


def test_a_restart_is_a_running_stage_and_a_cancel_cuts_its_warm_up_short(
    celery_worker, local_host, managed
):
    original = global_variable(managed, METHOD)
    plan = make_plan(
        managed_target(managed),
        local_host,
        servers={
            "configs": [{"label": "fsync", "text": "innodb_flush_method = fsync"}],
            "after_restart": "warm",
            "warm_s": WARM_S,
        },
        repeats=1,
    )
    batch = batches.batch_launch(plan=plan)

    def restart(stages: list[dict]) -> list[dict]:
        return [s for s in stages if s["kind"] == "restart"]

    running = restart(stages_until(batch, lambda s: bool(restart(s))))[0]
    assert running["status"] == "running" and running["finished_at"] is None, running
    assert running["config"] == "fsync" and "config=fsync" in running["reason"]

    done = stages_until(batch, lambda s: restart(s)[0]["status"] == "finished")
    assert len(restart(done)) == 1 and restart(done)[0]["ok"], done  # finished in its place
    # The restart came before the data set's prepare; the warm-up follows the prepare.
    stages_until(batch, lambda s: any(x["kind"] == "prepare" for x in s))
    batches.batch_cancel(batch=batch)  # the warm-up runs now, or is about to
    batch = wait_for_batch(batch, timeout=WARM_S - 30)

    assert batch.status == Status.CANCELLED, (batch.error, batch.stages)
    warmup = next(s for s in batch.stages if s["kind"] == "warmup")
    assert not warmup["ok"] and "cancelled" in warmup["error"], warmup  # cut short
    took = datetime.fromisoformat(warmup["finished_at"]) - datetime.fromisoformat(
        warmup["started_at"]
    )
    assert took.total_seconds() < WARM_S  # a bound: before the warm-up would have ended
    assert batch.stages[-1]["kind"] == "restore" and batch.stages[-1]["ok"], batch.stages
    assert all(s.get("status") != "running" for s in batch.stages)
    assert global_variable(managed, METHOD) == original  # the server put back
    assert batch.put_back[str(plan.target_id)]["running"] is None


def test_a_cancel_while_a_restart_waits_for_the_server_stops_it_and_puts_the_original_back(
    celery_worker, local_host, managed
):
    original = global_variable(managed, METHOD)
    # skip_networking: the server starts and never answers on its port, so the restart
    # waits for it until its timeout (60 s) unless a cancel ends the wait.
    plan = make_plan(
        managed_target(managed),
        local_host,
        servers={
            "configs": [{"label": "deaf", "text": "skip_networking"}],
            "after_restart": "cold",
        },
        repeats=1,
    )
    batch = batches.batch_launch(plan=plan)
    stages_until(batch, lambda s: any(x.get("status") == "running" for x in s))
    batches.batch_cancel(batch=batch)
    batch = wait_for_batch(batch, timeout=120)

    assert batch.status == Status.CANCELLED, (batch.error, batch.stages)
    restart = next(s for s in batch.stages if s["kind"] == "restart")
    assert restart["error"] == "stopped while the server started: the batch was cancelled"
    assert restart["seconds"] < 60  # a bound: before the restart's own timeout
    assert batch.stages[-1]["kind"] == "restore" and batch.stages[-1]["ok"], batch.stages
    assert global_variable(managed, METHOD) == original  # answers on its port again
    assert batch.put_back[str(plan.target_id)]["running"] is None
