"""Several benchmark workers share the queue: batches on different targets run at the same
time, while the locks keep two batches off one server (issue 15, item 2)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

from runs.models import Batch, LoadHost, Plan, Status, Target
from runs.services import batches
from tests.helpers import wait_for_batch, wait_until
from tests.servers import PrivateMariaDB

# Open-loop and short: two cells at once must not fight over the machine's two cores.
RUN = {"time": 4, "rate": 50, "report-interval": 1, "tables": 1, "table-size": 100}


@pytest.fixture
def second_server() -> Iterator[PrivateMariaDB]:
    server = PrivateMariaDB()
    try:
        yield server.start()
    finally:
        server.stop()


def _target(name: str, server: PrivateMariaDB, database: str) -> Target:
    return Target.objects.create(
        name=name,
        engine="mariadb",
        host="127.0.0.1",
        port=server.port,
        database=database,
        user=server.user,
        password=server.password,
    )


def _plan(name: str, target: Target) -> Plan:
    # A load host of its own per plan: only the target can keep these batches apart.
    host = LoadHost.objects.create(name=f"local for {name}", kind="local", port=0)
    return Plan.objects.create(
        name=name, target=target, load_host=host, test="oltp_point_select", options=RUN,
        threads=[1],
    )  # fmt: skip


def _span(batch: Batch) -> tuple[datetime, datetime]:
    starts = [r.started_at for r in batch.runs.all() if r.started_at is not None]
    ends = [r.finished_at for r in batch.runs.all() if r.finished_at is not None]
    return min(starts), max(ends)


def test_two_workers_run_two_targets_at_once_and_one_target_in_turn(
    worker_process, mariadb_server, mariadb_db, second_server
):
    here = _target("server one", mariadb_server, mariadb_db)
    there = _target("server two", second_server, second_server.create_database("sbtest"))
    workers = [worker_process("bench1"), worker_process("bench2")]
    wait_until(
        lambda: all(w.process.poll() is None for w in workers), timeout=5, what="the workers"
    )

    first = batches.batch_launch(plan=_plan("one, first", here))
    # One worker is busy: the next batch must go to the other, not wait in the first
    # one's prefetched messages until its benchmark ends.
    wait_until(lambda: first.runs.filter(status=Status.RUNNING).exists(), timeout=60, what="a run")
    elsewhere = batches.batch_launch(plan=_plan("two", there))
    then = batches.batch_launch(plan=_plan("one, then", here))
    done = [wait_for_batch(b, timeout=180) for b in (first, elsewhere, then)]

    assert [b.status for b in done] == [Status.DONE] * 3, [b.error for b in done]
    assert len({b.worker for b in done[:2]}) == 2, "each worker took one of the two targets"
    (a_start, a_end), (b_start, b_end), (c_start, _) = (_span(b) for b in done)
    assert a_start < b_end and b_start < a_end, "batches on two targets overlapped"
    assert c_start >= a_end, "the second batch on one target waited for the first"
