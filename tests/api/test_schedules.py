"""Schedules with the real beat (a `celery beat` process on the test database) and a real
worker: a plan is launched once when due, and a fire while its batch is still pending is
recorded as a skipped batch, never queued up."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from benchdash.celery import app
from runs.models import Batch, Plan, Status
from runs.services.nightly import schedules
from tests.helpers import wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


class BeatProcess:
    """`celery beat` with the database scheduler, as `make start` runs it."""

    def __init__(self, log: Path) -> None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "BENCHDASH_DB_NAME": connection.settings_dict["NAME"],
        }
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "benchdash", "beat", "--max-interval=1"],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


@pytest.fixture
def beat(transactional_db: None, tmp_path: Path) -> Iterator[Callable[[], BeatProcess]]:
    started: list[BeatProcess] = []
    # Fires left in the test broker by an earlier, interrupted session would launch too.
    app.control.purge()

    def start() -> BeatProcess:
        started.append(BeatProcess(tmp_path / "beat.log"))
        return started[-1]

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def cpu_plan(local_host, owner) -> Plan:
    # cpu needs no server; --rate keeps it light on a busy machine.
    return Plan.objects.create(
        name="cpu at night",
        load_host=local_host,
        test="cpu",
        options={"time": 5, "report-interval": 1, "rate": 20},
        threads=[1],
        created_by=owner,
    )


def test_a_clocked_plan_is_launched_once_when_due(api, cpu_plan, celery_worker, beat):
    due = timezone.now() + timedelta(seconds=4)
    answer = api.put(f"/api/v1/plans/{cpu_plan.pk}/schedule", json={"clocked_at": due.isoformat()})
    assert answer.status_code == 200, answer.text
    beat()

    wait_until(lambda: cpu_plan.batches.exists(), timeout=60, what="the scheduled launch")
    batch = wait_for_batch(cpu_plan.batches.get())

    assert batch.status == Status.DONE, batch.error
    assert batch.launched_by == "schedule"
    assert batch.created_at >= due
    # A clocked schedule is one-off: beat keeps ticking (every second) and fires no more.
    time.sleep(3)
    assert cpu_plan.batches.count() == 1
    task = PeriodicTask.objects.get(name=f"benchdash plan {cpu_plan.pk}")
    assert task.one_off
    # The schedule's statistics are written when it fires, for the schedules page and API.
    assert task.total_run_count == 1
    assert task.last_run_at is not None and task.last_run_at >= due
    schedule = api.get(f"/api/v1/plans/{cpu_plan.pk}/schedule").json()
    assert schedule["total_run_count"] == 1 and schedule["last_run_at"] is not None


def test_a_fire_while_the_batch_still_runs_is_recorded_as_skipped(
    api, cpu_plan, celery_worker, beat
):
    url = f"/api/v1/plans/{cpu_plan.pk}/schedule"
    assert api.put(url, json={"interval_s": 2}).status_code == 200
    beat()

    def skipped() -> bool:
        return cpu_plan.batches.filter(status=Status.SKIPPED).exists()

    wait_until(skipped, timeout=90, what="a fire during the run")
    # Editable at run time: switched off through the API while beat runs.
    assert api.put(url, json={"interval_s": 2, "enabled": False}).json()["enabled"] is False
    launched = list(cpu_plan.batches.exclude(status=Status.SKIPPED).order_by("created_at"))
    for batch in launched:
        wait_for_batch(batch)

    launched = [Batch.objects.get(pk=b.pk) for b in launched]
    assert launched[0].status == Status.DONE, launched[0].error
    assert all(b.launched_by == "schedule" for b in launched)
    # Never two at once: each launch began after the one before it had ended.
    for before, after in itertools.pairwise(launched):
        assert before.finished_at <= after.created_at
    # Each skipped fire happened while the batch it names was pending.
    for skip in cpu_plan.batches.filter(status=Status.SKIPPED):
        running = next(b for b in launched if skip.error == schedules_skip_error(b))
        fired = datetime.fromisoformat(skip.params["fired_at"])
        assert running.created_at <= fired <= running.finished_at
        assert skip.launched_by == "schedule"
        assert not skip.runs.exists()


def schedules_skip_error(batch: Batch) -> str:
    return f"skipped: batch {batch.pk} of this plan is still running"


def test_a_scheduled_fire_launches_as_a_user_would_or_records_why_not(cpu_plan, local_host):
    first = schedules.plan_launch_scheduled(plan_id=cpu_plan.pk)
    second = schedules.plan_launch_scheduled(plan_id=cpu_plan.pk)

    assert first is not None and second is not None
    assert (first.status, first.launched_by, first.runs.count()) == ("queued", "schedule", 1)
    assert (second.status, second.error) == ("skipped", schedules_skip_error(first))

    # A fire that waited in the queue while the batch ran is skipped all the same.
    Batch.objects.filter(pk=first.pk).update(status=Status.DONE, finished_at=timezone.now())
    late = schedules.plan_launch_scheduled(plan_id=cpu_plan.pk, fired_at=first.created_at)
    assert late is not None
    assert (late.status, late.error) == ("skipped", schedules_skip_error(first))

    Plan.objects.filter(pk=cpu_plan.pk).update(options={"time": "soon"})
    broken = schedules.plan_launch_scheduled(plan_id=cpu_plan.pk)
    assert broken is not None
    assert (broken.status, broken.error) == (
        "failed",
        "not launched: time: 'soon' is not a whole number",
    )
    assert schedules.plan_launch_scheduled(plan_id=10**9) is None
