"""A quiet worker: a run's samples, counter readings and raw log go to the database in
bulk with the heartbeat, and the heartbeat is also how the worker learns of a cancel.
The batch is executed in the test's own thread, so that its queries can be counted."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.execution import runner
from runs.models import Status
from runs.services import batches

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_a_run_writes_in_bulk_with_the_heartbeat_and_never_polls_for_a_cancel(make_plan, settings):
    settings.BENCHDASH_HEARTBEAT_SECONDS = 3
    plan = make_plan(
        test="oltp_read_only",
        options={"time": 9, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
    )
    batch = batches.batch_launch(plan=plan)

    with CaptureQueriesContext(connection) as queries:
        runner.batch_execute(batch_id=batch.pk, worker="test@here")

    run = batch.runs.get()
    assert run.status == Status.DONE, run.error
    samples = run.samples.count()
    assert samples >= 8
    assert run.counter_samples.count() >= 8
    sql = [q["sql"] for q in queries.captured_queries]
    # COPY is not among the captured queries: count the transactions that wrote rows.
    sample_writes = transactions_writing("runs_sample", run.pk)
    counter_writes = transactions_writing("runs_countersample", run.pk)
    log_writes = [s for s in sql if "UPDATE runs_run SET heartbeat_at" in s]
    batch_beats = [s for s in sql if s.startswith("UPDATE runs_batch SET heartbeat_at")]
    cancel_polls = [s for s in sql if '"cancel_requested_at" IS NOT NULL' in s]
    # 9 s of run at one heartbeat every 3 s: a write each, and the last one at the end.
    assert 1 <= sample_writes <= 5 < samples
    assert 1 <= counter_writes <= 5
    assert 1 <= len(log_writes) <= 5
    assert cancel_polls == []  # the heartbeat's own UPDATE says whether it was cancelled
    # While the run ran, the batch beat in the statement that stored the run's rows: the
    # beats on their own are those of the stages around it (prepare, settings, cleanup).
    assert all("UPDATE runs_batch SET heartbeat_at" in s for s in log_writes)
    assert len(batch_beats) < len(log_writes)
    assert run.raw_log.count("thds:") == samples


def transactions_writing(table: str, run_id: int) -> int:
    """How many (sub)transactions wrote a run's rows: rows one write stored share its id."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(DISTINCT xmin::text) FROM {table} WHERE run_id = %s",  # noqa: S608
            [run_id],
        )
        return int(cursor.fetchone()[0])
