"""Restarts that go wrong, on a managed mariadbd of the test's own: a cancel while the
server restarts, the worker killed during a restart-only cell (the sweeper puts the
original back, on the worker's machine or over the server host's SSH), and an original
that does not come back at the batch's end (the sweeper puts it back once it can,
Batch.put_back saying until then that it is not restored)."""

from __future__ import annotations

import time

import pytest

from runs.models import Batch, Run, Sample, Status
from runs.services import batches
from runs.services.recovery import batches_sweep_stale
from tests.execution.test_restarts import (
    METHOD,
    RUN,
    make_plan,
    managed,  # noqa: F401 - the fixture
    managed_target,
    started_from_its_config,
)
from tests.helpers import global_variable, wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


def other_than(value: str) -> str:
    return "fsync" if value.upper() != "FSYNC" else "O_DIRECT"


def state(batch: Batch) -> dict:
    batch.refresh_from_db()
    return next(iter(batch.put_back.values()))


def test_a_cancel_while_the_server_restarts_leaves_the_original_running(
    celery_worker,
    local_host,
    managed,  # noqa: F811
):
    original = global_variable(managed, METHOD)
    plan = make_plan(
        managed_target(managed),
        local_host,
        server_settings={METHOD: [other_than(original)]},
        servers={"after_restart": "cold"},
    )
    batch = batches.batch_launch(plan=plan)
    # Cancelled as soon as a worker has it: the worker hears of it at its first heartbeat,
    # and the first one after its preflight is while it waits for the restarted server.
    deadline = time.monotonic() + 120
    while Batch.objects.get(pk=batch.pk).status == Status.QUEUED:
        assert time.monotonic() < deadline, "no worker took the batch"
        time.sleep(0.05)
    batches.batch_cancel(batch=batch)
    batch = wait_for_batch(batch, timeout=200)

    assert batch.status == Status.CANCELLED, batch.error
    restarts = [s for s in batch.stages if s["kind"] == "restart"]
    assert len(restarts) == 1 and "stopped while the server started" in restarts[0]["error"]
    restores = [s for s in batch.stages if s["kind"] == "restore"]
    assert len(restores) == 1 and restores[0]["ok"], batch.stages
    assert restores[0]["started_at"] >= restarts[0]["finished_at"]
    assert global_variable(managed, METHOD) == original  # the original config runs
    assert state(batch)["running"] is None and state(batch)["restored_at"]
    assert not batch.runs.filter(status=Status.DONE).exists()


@pytest.mark.parametrize("machine", ["the worker's", "its server host over SSH"])
def test_a_worker_killed_in_a_restart_only_cell_the_sweeper_puts_the_original_back(
    request,
    worker_process,
    local_host,
    managed,  # noqa: F811
    machine,
):
    original = global_variable(managed, METHOD)
    changed = other_than(original)
    target = managed_target(managed)
    if machine != "the worker's":  # the restarts, and the sweeper's put-back, over SSH
        target.server_host = request.getfixturevalue("make_ssh_host")("db-host")
        target.save()
    plan = make_plan(
        target,
        local_host,
        options={**RUN, "time": 12, "rate": 10},
        server_settings={METHOD: [changed]},
        servers={"after_restart": "cold"},
        repeats=2,
    )
    first = worker_process()
    batch = batches.batch_launch(plan=plan)
    wait_until(
        lambda: Sample.objects.filter(run__batch=batch, run__position=0).count() >= 2,
        timeout=150,
        what="two samples of the first run, on the restarted server",
    )
    assert global_variable(managed, METHOD) == changed

    first.kill()
    time.sleep(6)  # the heartbeat goes stale (5 s in the test settings)
    worker_process()  # its start-up sweep recovers the batch: the original back first
    wait_until(
        lambda: any(
            s["kind"] == "restore" and "sweeper" in s["reason"]
            for s in Batch.objects.get(pk=batch.pk).stages
        ),
        timeout=120,
        what="the sweeper putting the original back",
    )
    batch = wait_for_batch(batch, timeout=200)

    kinds = [(s["kind"], s["ok"]) for s in batch.stages if s["kind"] in ("restart", "restore")]
    # restarted by the first worker; put back by the sweeper; restarted by the second
    # worker for the cell left; put back at the end.
    assert kinds == [("restart", True), ("restore", True), ("restart", True), ("restore", True)]
    assert Run.objects.get(batch=batch, position=0).status == Status.INTERRUPTED
    assert Run.objects.get(batch=batch, position=1).status == Status.DONE
    assert Run.objects.get(batch=batch, position=1).verified_settings[METHOD] == changed
    assert global_variable(managed, METHOD) == original
    assert state(batch)["running"] is None
    where = "server host db-host" if target.server_host else "the worker's machine"
    assert state(batch)["machine"].startswith(where)


def test_an_original_that_comes_back_late_is_put_back_by_the_sweeper(
    celery_worker,
    local_host,
    managed,  # noqa: F811
):
    started_from_its_config(managed)  # so that its put-back reads the config below
    original = global_variable(managed, METHOD)
    config = managed.dir / "my.cnf"
    good = config.read_text()
    plan = make_plan(
        managed_target(managed),
        local_host,
        options={**RUN, "time": 4},
        server_settings={METHOD: [other_than(original)]},
        servers={"after_restart": "cold"},
    )
    batch = batches.batch_launch(plan=plan)
    wait_until(
        lambda: Run.objects.filter(batch=batch, status=Status.RUNNING).exists(),
        timeout=150,
        what="the cell on the restarted server",
    )
    # The original cannot start for now: its own config says something it refuses.
    config.write_text(good + "benchdash-test-refuses-this = 1\n")
    batch = wait_for_batch(batch, timeout=200)

    assert "could not put the server's original config back" in batch.error
    assert "benchdash-test-refuses-this" in batch.error  # mariadbd's own line
    assert state(batch)["running"]  # Batch.put_back: not restored
    batches_sweep_stale(hostname="test")  # still refused: tried, left for the next sweep
    assert state(batch)["running"]

    config.write_text(good)  # the server can start again
    batches_sweep_stale(hostname="test")

    assert state(batch)["running"] is None
    assert global_variable(managed, METHOD) == original
    restores = [s for s in batch.stages if s["kind"] == "restore"]
    assert [s["ok"] for s in restores] == [False, False, True], restores
    assert "after the batch's end" in restores[-1]["reason"]
    assert any("original config was put back" in w for w in batch.warnings)
