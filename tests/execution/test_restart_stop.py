"""A managed server benchdash restarted runs in a session of its own, its pid recorded on
the batch: it outlives a worker killed mid-batch, still running the batch's config; then
`make stop` (scripts/stop) puts its original config back, as it was found, without the
sweeper, which does not run once stopped."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from runs.models import Sample
from runs.services import batches
from tests import processes
from tests.execution.test_restarts import (
    METHOD,
    RUN,
    make_plan,
    managed_instance,
    managed_target,
)
from tests.helpers import global_variable, wait_until
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def managed() -> Iterator[PrivateMariaDB]:
    yield from managed_instance(PrivateMariaDB())


def test_a_restarted_server_outlives_a_killed_worker_and_make_stop_puts_it_back(
    worker_process, local_host, managed, tmp_path
):
    original = global_variable(managed, METHOD)
    plan = make_plan(
        managed_target(managed),
        local_host,
        options={**RUN, "time": 60},
        servers={
            "configs": [{"label": "fsync", "text": "innodb_flush_method = fsync"}],
            "after_restart": "cold",
        },
        repeats=1,
    )
    worker = worker_process()
    batch = batches.batch_launch(plan=plan)
    wait_until(lambda: Sample.objects.filter(run__batch=batch).exists(), timeout=120,
               what="the run after the restart measuring")  # fmt: skip

    worker.kill()  # past any grace: its batch never put the server back

    batch.refresh_from_db()
    state = batch.put_back[str(plan.target_id)]
    assert state["running"]["config"] == "fsync"
    pid = int(state["pid"])  # recorded on the batch
    assert os.getsid(pid) == pid  # a session of its own: the worker's end is not its end
    assert global_variable(managed, METHOD) == "fsync"  # alive, with the batch's config

    stopped = subprocess.run(
        [str(ROOT / "scripts/stop")],
        env={
            **processes.test_env(),
            "BENCHDASH_VAR_DIR": str(tmp_path / "var"),  # no pid files: nothing else stopped
            "BENCHDASH_ENCRYPTION_KEYS": ",".join(settings.ENCRYPTION_KEYS),  # the target's
        },
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert stopped.returncode == 0, stopped.stderr
    assert f"batch {batch.pk}: the original config put back" in stopped.stdout, stopped.stderr

    assert global_variable(managed, METHOD) == original
    batch.refresh_from_db()
    assert batch.put_back[str(plan.target_id)]["running"] is None
    assert batch.stages[-1]["kind"] == "restore" and batch.stages[-1]["ok"], batch.stages
    assert all(s.get("status") != "running" for s in batch.stages)
