"""A target away past the wait at a batch's end gets that batch's settings and data set
back once it answers, whatever batches came after it: the sweeper puts them back (tries
backed off while the target is away), or the next batch's worker does before it reads
the server's originals; the batch records when."""

from __future__ import annotations

import socket

import pytest

from runs.models import Batch, LoadHost, Plan, Status, Target
from runs.services import batches, put_back, recovery, worker_watch
from tests.helpers import global_variable, wait_for_batch, wait_until
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

FLUSH = "innodb_flush_log_at_trx_commit"
RUN = {"time": 6, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10}


@pytest.fixture
def plan(restartable: PrivateMariaDB, local_host: LoadHost) -> Plan:
    original = global_variable(restartable, FLUSH)
    target = Target.objects.create(
        name=f"late-{restartable.port}", engine="mariadb", host=restartable.host,
        port=restartable.port, database="sbtest", user=restartable.user,
        password=restartable.password,
    )  # fmt: skip
    return Plan.objects.create(
        name="late put-back", target=target, load_host=local_host, test="oltp_read_only",
        options=RUN, threads=[1], server_settings={FLUSH: [{"0": "2"}.get(original, "0")]},
    )  # fmt: skip


def _tables(server: PrivateMariaDB) -> list[str]:
    db = server.root_connect()
    try:
        cursor = db.cursor()
        cursor.execute("SHOW TABLES FROM sbtest")
        return sorted(str(row[0]) for row in cursor.fetchall())
    finally:
        db.close()


def _left_by_a_batch(server: PrivateMariaDB, plan: Plan) -> Batch:
    """A batch whose target went away mid-run, past the wait: it ends with its setting and
    its data set left on the server."""
    batch = batches.batch_launch(plan=plan)
    wait_until(lambda: batch.runs.filter(samples__isnull=False).exists(), 90, what="a sample")
    server.stop_server()
    batch = wait_for_batch(batch, timeout=120)
    assert batch.status == Status.FAILED and batch.settings_restored_at is None, batch.error
    return batch


def test_a_batch_after_the_outage_does_not_keep_the_sweeper_from_putting_back(
    celery_worker, restartable, plan, settings
):
    settings.BENCHDASH_TARGET_WAIT_S = 3
    settings.BENCHDASH_WATCH_S, settings.BENCHDASH_SWEEP_S = 1, 8  # back-off 1, 2, 4, 8 s
    put_back.forget_tries()
    original = global_variable(restartable, FLUSH)
    left = _left_by_a_batch(restartable, plan)
    later = wait_for_batch(batches.batch_launch(plan=plan), timeout=120)  # the target away
    assert later.status == Status.FAILED, later.error
    assert left.target is not None

    # Away: tried once, then not again before its back-off is over, however often asked.
    for _ in range(3):
        recovery.batches_sweep_stale(hostname=socket.gethostname())
    assert put_back.tries_of(left.target) == 1
    assert not put_back.due(left.target)

    restartable.start_again()
    # As a server cut off (not restarted) keeps it: the cell's setting is still there.
    restartable.execute(f"SET GLOBAL {FLUSH} = {plan.server_settings[FLUSH][0]}")
    assert "sbtest1" in _tables(restartable)

    def put_back_by_the_watch() -> bool:  # beat's watch-workers, every BENCHDASH_WATCH_S
        worker_watch.batches_of_dead_workers(hostname=socket.gethostname())
        left.refresh_from_db()
        return left.settings_restored_at is not None and _tables(restartable) == []

    # The product's bound: within a sweep of the target answering.
    wait_until(put_back_by_the_watch, timeout=settings.BENCHDASH_SWEEP_S + 2, what="put back")
    assert global_variable(restartable, FLUSH) == original
    assert left.stages[-1]["kind"] == "cleanup" and left.stages[-1]["ok"], left.stages
    restored = [w for w in left.warnings if "were restored at" in w]
    assert len(restored) == 1 and "tries while it was away, the first at" in restored[0], restored
    assert not put_back.pending()


def test_the_next_batch_puts_back_what_an_earlier_one_left_before_it_reads_the_originals(
    celery_worker, restartable, plan, settings
):
    settings.BENCHDASH_TARGET_WAIT_S = 3
    original = global_variable(restartable, FLUSH)
    left = _left_by_a_batch(restartable, plan)
    restartable.start_again()
    restartable.execute(f"SET GLOBAL {FLUSH} = {plan.server_settings[FLUSH][0]}")

    # No sweep in between: the next batch's worker puts back first.
    following = wait_for_batch(batches.batch_launch(plan=plan), timeout=120)

    assert following.status == Status.DONE, following.error
    assert following.original_settings == {FLUSH: original}
    assert global_variable(restartable, FLUSH) == original
    left.refresh_from_db()
    assert left.settings_restored_at is not None
    started = following.runs.get().started_at
    assert started is not None and left.settings_restored_at <= started
    assert any(f"before batch {following.pk}" in w for w in left.warnings), left.warnings
    cleanup = left.stages[-1]
    assert cleanup["kind"] == "cleanup" and cleanup["ok"], left.stages
    assert any(f"batch {left.pk}" in w for w in following.warnings), following.warnings
