"""Status counters sampled while sysbench runs, on the private MariaDB."""

from __future__ import annotations

import itertools
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
    # the reading right after sysbench exits may miss the last few of them.
    assert counters["deltas"]["Com_select"] >= 0.98 * run.summary["queries"]
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


def test_the_sampler_reads_when_nudged_and_on_its_own_when_no_line_comes(target):
    """The worker nudges the sampler when an interval line wakes it; a nudge sooner than
    half an interval after a reading waits, and without nudges it reads a quarter of an
    interval late, on its own."""
    sampler = CounterSampler(run_id=0, connection=connection_of(target), interval_s=2.0)
    sampler.start()
    wait_until(lambda: len(sampler.readings) == 1, 30, "the first reading")  # at start

    sampler.nudge()  # too soon: nothing
    time.sleep(1.2)
    assert len(sampler.readings) == 1
    sampler.nudge()
    wait_until(lambda: len(sampler.readings) == 2, 1, "the nudged reading")
    wait_until(lambda: len(sampler.readings) == 3, 10, "a reading of its own")  # no nudge
    readings = sampler.stop()

    times = [t for t, _ in readings]
    assert len(times) == 4  # and the closing one
    assert 1.2 <= times[1] - times[0] < 2.5  # the nudge, before it was due on its own
    assert times[2] - times[1] >= 2.5  # a quarter of an interval late
    assert sampler.error == ""
    assert all("Com_select" in values for _, values in readings)


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
