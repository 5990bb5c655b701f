"""A matrix batch end to end: real worker, real sysbench, real MariaDB with binary logging."""

from __future__ import annotations

import re

import pytest

from runs.models import Run, Sample, Status
from runs.services import batches
from runs.sysbench import matrix
from tests.helpers import global_variable, printed_transactions, wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


def test_a_matrix_batch_runs_every_cell_and_restores_the_server(
    celery_worker, make_plan, mariadb_server, caplog
):
    original_flush = global_variable(mariadb_server, "innodb_flush_log_at_trx_commit")
    plan = make_plan(
        test="oltp_insert",
        options={"time": 3, "report-interval": 1, "tables": 1, "table-size": 100},
        threads=[1, 2],
        server_settings={"innodb_flush_log_at_trx_commit": ["1", "2"]},
        repeats=2,
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("status", "error")))
    runs = list(batch.runs.order_by("position"))
    assert len(runs) == 8
    for run in runs:
        assert run.status == Status.DONE
        assert run.samples.count() >= 2
        assert run.summary["transactions"] == printed_transactions(run.raw_log)
        assert run.verified_settings == run.settings
        assert run.histogram, "the histogram is on by default"
        assert "--config-file" in " ".join(run.argv)
        assert mariadb_server.password not in " ".join(run.argv)
    assert [s["kind"] for s in batch.stages] == ["prepare", "cleanup"]
    assert batch.original_settings == {"innodb_flush_log_at_trx_commit": original_flush}
    assert global_variable(mariadb_server, "innodb_flush_log_at_trx_commit") == original_flush
    assert batch.settings_restored_at is not None
    assert batch.environment["server"]["variables"]["log_bin"] == "ON"
    assert batch.environment["load_host"]["sysbench_version"].startswith("sysbench 1.0")
    assert mariadb_server.password not in caplog.text  # the worker logs no secret

    # The interleaved order is the one the recorded seed gives: it can be replayed.
    replay = matrix.expand(
        test="oltp_insert",
        fixed_options=batch.params["options"],
        axes=matrix.Axes(
            threads=[1, 2],
            server_settings={"innodb_flush_log_at_trx_commit": ["1", "2"]},
            options={},
        ),
        repeats=2,
        order="interleaved",
        seed=batch.seed,
        dataset_policy="shared",
    )
    assert [(r.threads, r.settings, r.round) for r in runs] == [
        (c.threads, c.settings, c.round) for c in replay
    ]
    # every round runs every cell once
    for round_ in (0, 1):
        keys = sorted(r.cell_key for r in runs if r.round == round_)
        assert len(set(keys)) == 4


def test_samples_are_numbered_and_keep_the_warmup_flag(celery_worker, make_plan):
    plan = make_plan(
        test="oltp_read_only",
        options={"time": 4, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 20},
        threads=[1],
        warmup_s=2,
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    run = batch.runs.get()
    assert run.status == Status.DONE, run.error
    samples = list(run.samples.order_by("seq"))
    assert [s.seq for s in samples] == list(range(1, len(samples) + 1))
    assert [s.in_warmup for s in samples] == [s.time_s <= 2 for s in samples]
    # --rate queue lines merged, every one printed; sysbench sometimes leaves out the last
    # interval's queue line as the run ends
    merged = [s for s in samples if s.queue_length is not None]
    assert len(merged) == run.raw_log.count("queue length:") >= len(samples) - 1
    assert run.summary["steady_after_checkpoint"] is True
    assert "--report-checkpoints=2" in run.argv
    steady = run.summary["interval_tps"]
    assert steady["n"] == len([s for s in samples if not s.in_warmup])
    assert steady["min"] <= steady["median"] <= steady["max"]


def test_every_sample_of_a_run_is_stored(celery_worker, make_plan):
    plan = make_plan(options={"time": 3, "report-interval": 1, "tables": 1, "table-size": 100})

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    run = batch.runs.get()
    printed = len(re.findall(r"^\[ \d+s \] thds:", run.raw_log, re.MULTILINE))
    assert printed >= 2
    assert Sample.objects.filter(run=run).count() == printed
    assert Run.objects.filter(batch=batch, status=Status.DONE).count() == 1
