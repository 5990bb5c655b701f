"""A worker killed mid-run: the sweeper recovers, a restarted worker finishes the batch."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from runs.models import Run, Sample, Status
from runs.services import batches
from tests.helpers import global_variable, wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def process_exists(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def test_a_killed_worker_is_recovered_without_running_a_cell_twice(
    worker_process, make_plan, mariadb_server
):
    original_flush = global_variable(mariadb_server, "innodb_flush_log_at_trx_commit")
    plan = make_plan(
        test="oltp_read_only",
        options={"time": 15, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
        server_settings={"innodb_flush_log_at_trx_commit": ["0", "2"]},
        order_policy="ramp",
    )
    first = worker_process()
    batch = batches.batch_launch(plan=plan)
    wait_until(
        lambda: Sample.objects.filter(run__batch=batch, run__position=0).count() >= 2,
        timeout=90,
        what="two samples of the first run",
    )
    killed = Run.objects.get(batch=batch, position=0)
    samples_before_kill = killed.samples.count()
    changed = global_variable(mariadb_server, "innodb_flush_log_at_trx_commit")

    first.kill()

    assert killed.pgid and process_exists(killed.pgid), "sysbench outlives its worker"
    assert changed == killed.settings["innodb_flush_log_at_trx_commit"]
    time.sleep(6)  # the heartbeat goes stale (5 s in the test settings)
    worker_process()  # its start-up sweep recovers the batch

    batch = wait_for_batch(batch, timeout=120)

    killed.refresh_from_db()
    assert killed.status == Status.INTERRUPTED
    assert "stopped beating" in killed.error
    assert killed.samples.count() >= samples_before_kill
    assert not process_exists(killed.pgid), "the orphaned sysbench was killed"
    later = list(batch.runs.filter(position__gt=0).order_by("position"))
    assert [r.status for r in later] == [Status.DONE]
    assert batch.runs.count() == 2  # no cell ran twice
    assert global_variable(mariadb_server, "innodb_flush_log_at_trx_commit") == original_flush
    assert any("resumed after the worker" in w for w in batch.warnings)
    assert os.getpgid(os.getpid()) != killed.pgid


def test_a_killed_worker_leaves_no_config_file_and_loses_no_published_sample(
    tmp_path, transactional_db, make_plan
):
    """The config file holds the target's password: the sweeper removes sysbench's private
    directory of a dead worker. Samples go to the database every few seconds, but every
    sample published live is in the run's recent list: the sweeper stores those too."""
    from runs.execution.stream import live
    from tests.processes import WorkerProcess, test_env

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**test_env(), "TMPDIR": str(tmpdir), "BENCHDASH_HEARTBEAT_SECONDS": "4"}
    plan = make_plan(
        test="oltp_read_only",
        options={"time": 20, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
    )
    first = WorkerProcess(tmp_path / "first.log", env=env)
    second = None
    try:
        batch = batches.batch_launch(plan=plan)
        run = batch.runs.get()
        # Its own: the list of a run of an earlier test database may still hold its id.
        wait_until(
            lambda: (
                Run.objects.exclude(config_dir="").filter(pk=run.pk).exists()
                and len(live.recent_samples(run.pk)) >= 6
            ),
            timeout=90,
            what="six samples live",
        )
        run.refresh_from_db()
        config_dir = Path(run.config_dir)
        assert config_dir.parent == tmpdir and (config_dir / "sysbench.cfg").exists()

        first.kill()
        published = {s["seq"] for s in live.recent_samples(run.pk)}
        stored_before = set(run.samples.values_list("seq", flat=True))
        assert published - stored_before, "some samples were only live when it died"
        time.sleep(6)  # the heartbeat goes stale (5 s in the test settings)
        second = WorkerProcess(tmp_path / "second.log", env=env)
        wait_until(
            lambda: Run.objects.get(pk=run.pk).status == Status.INTERRUPTED,
            timeout=60,
            what="the sweeper",
        )
    finally:
        first.stop()
        if second is not None:
            second.stop()

    run.refresh_from_db()
    assert run.config_dir == ""
    assert not config_dir.exists()
    assert list(tmpdir.iterdir()) == [], "no file of sysbench's is left"
    stored = list(run.samples.order_by("seq").values_list("seq", flat=True))
    assert published <= set(stored)
    assert stored == list(range(1, len(stored) + 1))  # none lost, none doubled
    # Each stored sample has its line in the raw log, and the run says where they came from.
    times = run.samples.order_by("seq").values_list("time_s", flat=True)
    logged = [line for line in run.raw_log.splitlines() if "] thds:" in line]
    assert [f"[ {t:g}s ]" for t in times] == [line.split(" thds:")[0] for line in logged]
    assert any("stored from the live list" in w for w in run.warnings), run.warnings
