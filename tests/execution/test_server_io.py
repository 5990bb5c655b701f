"""The database server's own storage I/O end to end (issue 48): a real worker, real
sysbench writing to the private MariaDB, its /proc/<pid>/io read each second on this
machine and over the private sshd, stored in the host metrics' rows, summed per
transaction, and the relative table's read and write KB taken from it."""

from __future__ import annotations

import pytest

from runs.models import Status
from runs.services import batches
from runs.services.answers.relative import batch_relative
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

WRITES = {"time": 3, "report-interval": 1, "tables": 1, "table-size": 100}


def server_rows(run) -> list[dict]:
    return [m.values for m in run.host_metrics.filter(role="server").order_by("seq")]


def own_write_kb_per_tx(run) -> float:
    (entry,) = [h for h in run.host_summary["hosts"] if h["role"] == "server"]
    assert "io_why" not in entry["db"], entry["db"]
    return entry["db"]["write_kb_per_tx"]


def test_a_write_run_records_the_servers_own_writes_and_the_table_uses_them(
    celery_worker, make_plan
):
    plan = make_plan(test="oltp_write_only", options=WRITES, threads=[1, 2])

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))

    assert batch.status == Status.DONE, batch.error
    runs = list(batch.runs.order_by("threads"))
    for run in runs:
        rows = server_rows(run)
        assert rows and all("write_kbs" in v["db"] and "read_kbs" in v["db"] for v in rows)
        assert sum(v["db"]["write_kbs"] for v in rows) > 0  # mariadbd's redo log, its pages
        assert own_write_kb_per_tx(run) > 0
    table = batch_relative(batch=batch)
    assert table is not None and table.axis == "threads"
    assert table.io_source == "server process"
    cells = table.families[0].rows[0].cells
    for cell, run in zip(cells, runs, strict=True):
        assert cell.per_tx.io_source == "server process"
        assert cell.per_tx.write_kb == own_write_kb_per_tx(run)


def test_over_ssh_the_servers_own_writes_are_read_too(
    celery_worker, make_plan, ssh_host, make_ssh_host, target
):
    target.server_host = make_ssh_host("db-host")
    target.save()
    plan = make_plan(load_host=ssh_host, test="oltp_write_only", options=WRITES, threads=[1])

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))

    assert batch.status == Status.DONE, batch.error
    run = batch.runs.get()
    rows = server_rows(run)
    assert rows and all("write_kbs" in v["db"] for v in rows)
    assert sum(v["db"]["write_kbs"] for v in rows) > 0
    assert own_write_kb_per_tx(run) > 0
