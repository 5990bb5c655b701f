"""cpu, memory and fileio on the local load host with no target: how fast the load host
and its disk are, before any database is tested."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.models import Plan, Status
from runs.services import batches
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def plan(local_host, **fields) -> Plan:
    values = {"name": f"{fields['test']} plan", "target": None, "load_host": local_host}
    values.update(fields)
    return Plan.objects.create(**values)


def test_a_cpu_plan_runs_without_a_target(celery_worker, local_host):
    batch = wait_for_batch(
        batches.batch_launch(
            plan=plan(
                local_host,
                test="cpu",
                options={"time": 2, "cpu-max-prime": 2000},
                threads=[1, 2],
            )
        )
    )

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    assert batch.target is None
    for run in batch.runs.all():
        assert run.summary["eps"] > 0
        assert run.counters == {}  # no server to sample
        samples = list(run.samples.order_by("seq"))
        assert samples and all(s.extra["eps"] > 0 for s in samples)
    assert batch.stages == []  # no data set to prepare


def test_a_memory_plan_reports_its_throughput(celery_worker, local_host):
    batch = wait_for_batch(
        batches.batch_launch(plan=plan(local_host, test="memory", options={"time": 2}, threads=[1]))
    )

    run = batch.runs.get()
    assert run.status == Status.DONE, run.error
    assert run.summary["mib_per_s"] > 0
    assert run.samples.order_by("seq")[0].extra["mib_per_s"] > 0


def test_fileio_keeps_its_files_from_prepare_through_the_runs_to_cleanup(
    celery_worker, local_host, settings, tmp_path
):
    settings.BENCHDASH_WORK_DIR = str(tmp_path / "work")
    batch = wait_for_batch(
        batches.batch_launch(
            plan=plan(
                local_host,
                test="fileio",
                options={
                    "time": 2,
                    "file-num": 2,
                    "file-total-size": "8M",
                    "file-test-mode": "rndrw",
                },
                threads=[1, 2],
            )
        )
    )

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    assert [(s["kind"], s["ok"]) for s in batch.stages] == [("prepare", True), ("cleanup", True)]
    assert "Creating file test_file.0" in batch.stages[0]["output"]
    for run in batch.runs.all():
        # rndrw on files that were not prepared fails at once: these ran on the prepared ones
        assert run.status == Status.DONE, run.error
        assert run.summary["file_reads_per_s"] > 0
        assert run.summary["file_fsyncs_per_s"] > 0
    workspace = Path(settings.BENCHDASH_WORK_DIR) / f"batch-{batch.pk}"
    assert not workspace.exists(), "the batch's working directory is removed at the end"
