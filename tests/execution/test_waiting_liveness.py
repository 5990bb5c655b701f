"""Liveness that knows waiting: a worker waiting for a quiet host is alive. Its batch beats
through the wait, and the sweeper leaves a silent batch to a worker that still beats in
Redis."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from runs.execution import liveness
from runs.models import Batch, Status
from runs.services import batches, recovery
from tests.helpers import wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SHORT = {"time": 3, "report-interval": 1, "tables": 1, "table-size": 100}


@pytest.fixture
def burn() -> Iterator[Callable[[int], None]]:
    """Both cores busy for `seconds`: the load host (this machine behind the loopback
    sshd) is not quiet until then."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(seconds: int) -> None:
        procs.extend(
            subprocess.Popen(
                ["timeout", str(seconds), "sha1sum", "/dev/zero"], start_new_session=True
            )
            for _ in range(2)
        )

    yield start
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def test_a_quiet_host_wait_longer_than_the_stale_time_is_not_requeued(
    celery_worker, make_plan, ssh_host, burn
):
    stale_s = settings.BENCHDASH_STALE_AFTER_SECONDS
    burn(int(stale_s) + 7)  # the wait outlasts the stale time
    plan = make_plan(load_host=ssh_host, options=SHORT, threads=[1])
    plan.quiet_wait_s = int(stale_s) + 20
    plan.save()
    batch = batches.batch_launch(plan=plan, launched_by="api")
    wait_until(
        lambda: Batch.objects.get(pk=batch.pk).waiting_for.startswith("a quiet host"),
        30,
        "the batch to wait for a quiet host",
    )
    waited_from = time.monotonic()
    requeued = []
    # The sweeper, as beat runs it, all through the wait.
    while Batch.objects.get(pk=batch.pk).waiting_for.startswith("a quiet host"):
        requeued += recovery.batches_sweep_stale(hostname=socket.gethostname())
        time.sleep(0.5)
    assert time.monotonic() - waited_from > stale_s, "the wait was shorter than the stale time"
    assert requeued == []
    batch = wait_for_batch(batch)
    assert batch.status == Status.DONE, batch.error
    assert [r.status for r in batch.runs.all()] == [Status.DONE]
    assert not any("resumed after the worker" in w for w in batch.warnings)


def test_the_sweeper_leaves_a_silent_batch_to_a_worker_that_beats(make_plan):
    batch = batches.batch_launch(plan=make_plan(), launched_by="api")
    old = timezone.now() - timedelta(seconds=settings.BENCHDASH_STALE_AFTER_SECONDS + 60)
    Batch.objects.filter(pk=batch.pk).update(
        status=Status.RUNNING, worker="waiter@elsewhere", heartbeat_at=old, started_at=old
    )
    name = liveness.WORKER + "waiter@elsewhere"
    # The same worker name, restarted, running nothing: not alive for this batch.
    liveness.process_beat(name=name, report={"queues": [], "batches": []})
    try:
        assert recovery.batches_sweep_stale(hostname="here") == [batch.pk]
    finally:
        liveness.process_forget(name=name)
    Batch.objects.filter(pk=batch.pk).update(status=Status.RUNNING, heartbeat_at=old)
    liveness.process_beat(name=name, report={"queues": [], "batches": [batch.pk]})
    try:
        assert recovery.batches_sweep_stale(hostname="here") == []
        assert Batch.objects.get(pk=batch.pk).status == Status.RUNNING
    finally:
        liveness.process_forget(name=name)
    # Without its worker's heartbeat, the same batch is one whose worker died.
    assert recovery.batches_sweep_stale(hostname="here") == [batch.pk]
