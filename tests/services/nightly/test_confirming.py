"""A confirmation under way (runs/services/nightly/confirming.py): when its answer is due
and what it waits for, read from the rows a night, its alert and its re-run leave."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from runs.analysis.nightly import confirmation
from runs.models import Alert, Batch, LaunchedBy, LoadHost, Plan, ResourceLock, Run, Status
from runs.services.nightly import confirming

NIGHT_S = 2.0  # the nights of tests/api/test_nightly_verdict.py


@pytest.fixture
def plan(db: None) -> Plan:
    host = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    return Plan.objects.create(
        name="nightly inserts", load_host=host, test="oltp_insert", options={"time": 2}
    )


def _alert(plan: Plan, status: str, runs: int = confirmation.MIN_REPEATS) -> Alert:
    ended = timezone.now() - timedelta(seconds=5)
    night = Batch.objects.create(
        plan=plan, load_host=plan.load_host, params={}, seed=1, status=Status.DONE,
        launched_by=LaunchedBy.SCHEDULE, finished_at=ended,
    )  # fmt: skip
    rerun = Batch.objects.create(
        plan=plan, load_host=plan.load_host, params={}, seed=1, status=status,
        launched_by=LaunchedBy.CONFIRM,
    )  # fmt: skip
    Run.objects.bulk_create(
        Run(batch=rerun, position=i, round=i, cell_key="c", threads=1, expected_duration_s=NIGHT_S)
        for i in range(runs)
    )
    return Alert.objects.create(
        plan=plan, batch=night, confirmation=rerun, cells=[{"identity": "c", "steps": []}]
    )


def _after_night(alert: Alert) -> float:
    assert alert.batch.finished_at is not None
    return (confirming.confirmation_due(alert=alert) - alert.batch.finished_at).total_seconds()


def test_a_large_steps_answer_is_due_within_a_minute_of_two_second_nights(plan):
    alert = _alert(plan, Status.QUEUED)
    due = _after_night(alert)
    assert due < 60
    # Three runs of 2 s, each with its allowance, and the hand-overs: nothing else.
    each = NIGHT_S + confirming.RUN_ALLOWANCE_S
    assert due == confirming.HAND_OVER_ALLOWANCE_S + confirmation.MIN_REPEATS * each


def test_a_repeat_a_marginal_step_adds_moves_the_answer_later_up_to_the_maximum(plan):
    three = _after_night(_alert(plan, Status.RUNNING))
    four = _after_night(_alert(plan, Status.RUNNING, runs=4))
    most = _after_night(_alert(plan, Status.RUNNING, runs=confirmation.MAX_REPEATS + 3))
    each = NIGHT_S + confirming.RUN_ALLOWANCE_S
    assert four == three + each
    assert most == three + (confirmation.MAX_REPEATS - confirmation.MIN_REPEATS) * each


def test_a_queued_rerun_says_which_batch_holds_its_load_host(plan):
    alert = _alert(plan, Status.WAITING)
    holder = Batch.objects.create(
        plan=plan, load_host=plan.load_host, params={}, seed=1, status=Status.RUNNING,
        launched_by=LaunchedBy.API, started_at=timezone.now(),
    )  # fmt: skip
    ResourceLock.objects.create(resource=f"loadhost:{plan.load_host_id}", batch=holder)
    text = confirming.confirmation_waiting(alert=alert)
    assert text.startswith(f"the re-run (batch {alert.confirmation_id}) is waiting: ")
    assert f"load host local is busy with batch {holder.pk}" in text
    assert f"the workers run batch {holder.pk} (running since" in text


def test_a_running_rerun_says_its_runs_done_and_why_a_repeat_was_added(plan):
    alert = _alert(plan, Status.RUNNING)
    rerun = Batch.objects.get(confirms=alert)
    Run.objects.filter(batch=rerun, position__lt=3).update(status=Status.DONE)
    Run.objects.create(
        batch=rerun, position=3, round=3, cell_key="c", threads=1,
        reason="repeat 4 of threads=1: ±9.1 % > target ±5 %",
    )  # fmt: skip
    text = confirming.confirmation_waiting(alert=alert)
    assert text == (
        f"the re-run (batch {alert.confirmation_id}) is running: 3 of 4 runs done; run 4 was "
        "added: repeat 4 of threads=1: ±9.1 % > target ±5 %"
    )


def test_a_judged_alert_waits_for_nothing(plan):
    alert = _alert(plan, Status.DONE)
    Alert.objects.filter(pk=alert.pk).update(state=Alert.State.CONFIRMED, verdict="tps ...")
    alert.refresh_from_db()
    assert confirming.confirmation_waiting(alert=alert) == ""
