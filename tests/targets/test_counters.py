"""Status counters sampled while sysbench runs, on the private MariaDB."""

from __future__ import annotations

import itertools
import os
import signal
import time

import pytest

from runs.analysis.results import RunFigures
from runs.analysis.why import panel as why
from runs.analysis.why.fsyncs import BINLOG, PROBE, REDO
from runs.models import Status
from runs.services import batches
from runs.targets import connection_of
from runs.targets.counters import CounterSampler
from runs.targets.mysql import SPIN_WAITS
from tests.helpers import wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


def test_point_selects_grow_com_select_with_the_samples_and_read_one_row_each(
    celery_worker, make_plan
):
    plan = make_plan(
        test="oltp_point_select",
        options={"time": 3, "report-interval": 1, "tables": 1, "table-size": 1000},
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    run = batch.runs.get()
    assert run.status == Status.DONE, run.error
    readings = list(run.counter_samples.order_by("seq"))
    assert len(readings) >= 4  # at start, every second, and after sysbench ended
    selects = [r.values["Com_select"] for r in readings]
    # every reading while sysbench runs counts more selects; the last one follows its end
    assert all(a < b for a, b in itertools.pairwise(selects[:-1])), selects
    assert readings[0].time_s < 0.5
    samples = list(run.samples.order_by("seq"))
    # the readings line up with the interval lines: both count from sysbench's start
    assert abs(readings[-1].time_s - samples[-1].time_s) < 2.5
    counters = run.counters
    # The server folds a session's counts into the global ones as its statements end, so
    # the reading right after sysbench exits may miss the last few of them (2.3 % of a
    # 3 s run's in a loaded whole run: its last sessions still ending).
    assert counters["deltas"]["Com_select"] >= 0.95 * run.summary["queries"]
    assert 0.9 <= counters["derived"]["rows_read_per_query"] <= 1.2, counters["derived"]
    assert counters["gauges"]["Threads_connected"]["max"] >= 2  # sysbench and the sampler
    assert counters["error"] == ""
    # MariaDB 10.11 has neither InnoDB's own row and log-fsync counters nor the SEMAPHORES
    # figures: the run says so rather than leave them silently absent.
    assert {"Innodb_rows_read", "Innodb_os_log_fsyncs", SPIN_WAITS} <= set(counters["missing"])
    assert "Com_select" not in counters["missing"] and "Rows_read" not in counters["missing"]


def test_flushing_the_log_at_each_commit_costs_more_fsyncs_per_transaction(
    celery_worker, make_plan
):
    plan = make_plan(
        test="oltp_insert",
        options={"time": 3, "report-interval": 1, "tables": 1, "table-size": 100},
        server_settings={"innodb_flush_log_at_trx_commit": ["0", "1"]},
        order_policy="ramp",
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    per_trx = {
        r.settings["innodb_flush_log_at_trx_commit"]: r.counters["derived"][
            "log_fsyncs_per_transaction"
        ]
        for r in batch.runs.all()
    }
    assert per_trx["1"] > per_trx["0"], per_trx
    assert per_trx["1"] > 0.5  # about one per commit


def test_the_worker_sends_each_reading_when_a_line_wakes_it_and_reads_it_at_its_next_wake(target):
    """MariaDB 10.11's reading is one statement: after the thread's first reading the
    worker takes them, sending the statement when a line wakes it (half an interval or more
    after the last) and reading the answer at its next wake, timed when it was sent; with
    no line it wakes for one a quarter of an interval late (due_at); the thread takes the
    connection back for the closing reading."""
    sampler = CounterSampler(run_id=0, connection=connection_of(target), interval_s=2.0)
    sampler.start()
    wait_until(lambda: sampler.due_at() is not None, 30, "the connection handed to the worker")
    assert len(sampler.readings) == 1  # the thread's first
    first_due = sampler.due_at()

    sampler.awake(line=True)  # too soon: nothing sent
    time.sleep(1.2)
    sampler.awake(line=False)  # no line, not due: nothing sent
    assert sampler.due_at() == first_due
    sampler.awake(line=True)  # sent
    assert len(sampler.readings) == 1  # its answer is read at the next wake
    time.sleep(0.3)
    sampler.awake(line=False)
    assert len(sampler.readings) == 2
    due = sampler.due_at()
    assert due is not None
    time.sleep(max(0.0, due - time.monotonic()))  # the worker's wait for a line times out
    sampler.awake(line=False)  # sent
    time.sleep(0.3)
    sampler.awake(line=False)
    readings = sampler.stop()

    times = [t for t, _ in readings]
    assert len(times) == 4  # and the closing one, by the thread
    assert 1.2 <= times[1] - times[0] < 2.2  # the line's, timed when it was sent
    assert 2.5 <= times[2] - times[1] < 3.0  # a quarter of an interval late
    assert times[3] >= times[2] + 0.3
    assert sampler.error == ""
    assert all("Com_select" in values for _, values in readings)
    assert readings[1][1]["Com_select"] <= readings[2][1]["Com_select"]


def test_a_reading_the_server_has_not_answered_waits_for_a_later_wake(target, mariadb_server):
    """A reading sent to a server that cannot answer yet (stopped with SIGSTOP: the
    private server of these tests) is looked at again at the worker's next wake, never
    waited for; meanwhile no other is sent, and the worker's next look is an interval away,
    not at once (a worker spinning on a slow server)."""
    sampler = CounterSampler(run_id=0, connection=connection_of(target), interval_s=1.0)
    sampler.start()
    wait_until(lambda: sampler.due_at() is not None, 30, "the connection handed to the worker")
    time.sleep(0.6)
    pid = int((mariadb_server.dir / "mariadb.pid").read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        sampler.awake(line=True)  # sent
        time.sleep(0.6)
        sampler.awake(line=True)  # due again, but the last one is not answered
        assert len(sampler.readings) == 1
        due = sampler.due_at()
        assert due is not None and due - time.monotonic() > 0.8
    finally:
        os.kill(pid, signal.SIGCONT)

    # Answered once the server goes on: read at a wake of the worker's after that.
    def answered() -> bool:
        sampler.awake(line=False)
        return len(sampler.readings) == 2

    wait_until(answered, 10, "the answer")
    readings = sampler.stop()
    # In step: each statement's answer read before the next (a later one may have gone
    # out at the last look, and the closing reading follows it).
    assert len(readings) >= 3 and sampler.error == ""
    assert readings[1][0] - readings[0][0] < 1.3  # timed when it was sent, not read (1.5)


def test_a_single_thread_insert_under_flush_1_and_sync_binlog_1_fsyncs_twice(
    celery_worker, make_plan
):
    """Without performance_schema (the private MariaDB's default), the binary log's syncs
    come from its group commits under the sampled sync_binlog: the redo log's fsync and
    the binlog's make about 2 per transaction, not the 1.00 the log's counter alone says."""
    plan = make_plan(
        test="oltp_insert",
        options={"time": 3, "report-interval": 1, "tables": 1, "table-size": 100},
        server_settings={"innodb_flush_log_at_trx_commit": ["1"], "sync_binlog": ["0", "1"]},
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    sides = {
        value: why.side_figures(f"sync_binlog={value}", [RunFigures.of(r)])
        for r in batch.runs.all()
        if (value := r.settings["sync_binlog"])
    }
    synced, unsynced = sides["1"], sides["0"]
    assert synced is not None and unsynced is not None
    assert synced.log_fsyncs == pytest.approx(1.0, abs=0.1)
    assert synced.binlog_fsyncs == pytest.approx(1.0, abs=0.1)
    assert synced.fsyncs == pytest.approx(2.0, abs=0.2)
    assert synced.budget.binlog_fsyncs_from == "Binlog_group_commits ÷ sync_binlog"
    assert unsynced.binlog_fsyncs == 0.0
    assert unsynced.fsyncs == pytest.approx(1.0, abs=0.1)
    run = batch.runs.get(settings__sync_binlog="1")
    assert run.counters["fsync_timing"]["reason"] == "performance_schema is off"
    assert run.counters["gauges"]["sync_binlog"]["max"] == 1.0
    pair = why.explain(unsynced, synced, threads=1)
    # the redo log timed by the sync probe; the binary log, untimed by the server, by the
    # probe's overwrite as a lower bound (a growing file's sync commits the journal too)
    redo, binlog = synced.by_class.get(REDO), synced.by_class.get(BINLOG)
    assert redo.source == PROBE and not redo.lower_bound, synced.by_class.to_dict()
    assert binlog.source == PROBE and binlog.lower_bound, synced.by_class.to_dict()
    assert pair.lower_bound and "≥" in pair.text and "(sync probe)" in pair.text, pair.text
    assert pair.moved.startswith("sync_binlog=1 adds 1.0 fsync")
