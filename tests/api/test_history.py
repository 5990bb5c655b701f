"""A plan's steps, read by a script: 30 nights stored as a worker leaves them (a scheduled
batch each, its runs' summaries), checked one after another by the nightly check as the
task does, with the news going to a real HTTP server on loopback. The figures are seeded:
1,000 tps with 1.5 % noise for 20 nights, then 5 % slower."""

from __future__ import annotations

import json
from datetime import timedelta

import numpy as np
import pytest
from django.test import Client
from django.utils import timezone

from runs.models import Alert, Batch, LaunchedBy, Plan, Run, Status
from runs.services.nightly import alerts, history
from tests.services.nightly.test_history import Receiver

NIGHTS, STEP_AT = 30, 20
OPTIONS = {"time": 60, "tables": 1, "table-size": 10000}


@pytest.fixture
def webhook():
    receiver = Receiver()
    yield receiver
    receiver.stop()


def stored_night(plan: Plan, night: int, tps: float) -> Batch:
    """One scheduled night, done, with three repeats of its one cell around `tps`."""
    when = timezone.now() - timedelta(days=NIGHTS - night)
    batch = Batch.objects.create(
        plan=plan,
        params={"test": plan.test, "options": OPTIONS, "repeats": 3},
        seed=1,
        status=Status.DONE,
        launched_by=LaunchedBy.SCHEDULE,
        started_at=when,
        finished_at=when + timedelta(minutes=3),
    )
    Batch.objects.filter(pk=batch.pk).update(created_at=when)
    batch.refresh_from_db()
    Run.objects.bulk_create(
        Run(
            batch=batch,
            position=repeat,
            round=repeat,
            cell_key=json.dumps({"options": {}, "settings": {}, "threads": 1}, sort_keys=True),
            threads=1,
            settings={},
            options=OPTIONS,
            status=Status.DONE,
            summary={"tps": tps + d, "latency_pct": 95, "latency_pct_ms": 2.0, "errors": 0},
        )
        for repeat, d in enumerate((-1.0, 0.0, 1.0))
    )
    return batch


def confirmed(confirm: Batch | None, tps: float) -> None:
    """A confirmation batch ended as a worker leaves it: its queued runs done around `tps`,
    then judged as the task does."""
    assert confirm is not None, "the alert launched no confirmation"
    for n, run in enumerate(confirm.runs.order_by("position")):
        run.status = Status.DONE
        run.summary = {"tps": tps + n - 1, "latency_pct": 95, "latency_pct_ms": 2.0, "errors": 0}
        run.save(update_fields=["status", "summary"])
    Batch.objects.filter(pk=confirm.pk).update(status=Status.DONE, finished_at=timezone.now())
    confirm.refresh_from_db()
    alerts.batch_judge(batch=confirm)


def test_a_5_percent_step_is_marked_at_its_night_and_alerted_once(api, local_host, webhook, owner):
    plan = Plan.objects.create(
        name="nightly inserts",
        load_host=local_host,
        test="oltp_insert",
        options=OPTIONS,
        threads=[1],
        regression_threshold_pct=4,  # a 5 % step measures about 4 to 6 % on these nights
        notify_webhook=webhook.url,
    )
    rng = np.random.default_rng(28)
    levels = [1000.0 if n < STEP_AT else 950.0 for n in range(NIGHTS)]
    nights = []
    for n, level in enumerate(levels):
        nights.append(stored_night(plan, n, level * (1 + 0.015 * rng.standard_normal())))
        alerts.batch_judge(batch=nights[-1])  # as the task does when a night ends
    for batch in nights:
        batch.refresh_from_db()

    # One night alerted: the first check that saw the step, and only that one.
    alerted = [b for b in nights if b.analysis["flagged"]]
    assert len(alerted) == 1, [(b.pk, b.analysis["summary"]) for b in nights]
    (first,) = alerted
    assert nights.index(first) >= STEP_AT
    (cell,) = first.analysis["cells"]
    (step,) = [s for s in cell["steps"] if s["alert"]]
    assert step["batch"] == nights[STEP_AT].pk and step["direction"] == "slower"
    assert first.analysis["status"] == "regression"
    # The nights before the step: never alerted.
    assert all(b.notified == [] for b in nights[:STEP_AT])

    # Nobody told yet: the alert waits for its confirmation, a batch of the flagged cell.
    alert = Alert.objects.get()
    assert alert.batch == first and alert.state == Alert.State.CONFIRMING
    assert webhook.received == []
    confirmed(alert.confirmation, 950.0)  # the re-run, as the worker leaves it
    alert.refresh_from_db()
    assert alert.state == Alert.State.CONFIRMED

    # The news went out once, with the step.
    (hook,) = webhook.received
    news = hook["body"]
    assert news["event"] == "regression" and news["batch"]["id"] == first.pk
    (flagged,) = news["flagged"]
    assert flagged["steps"][0]["batch"] == nights[STEP_AT].pk
    assert flagged["steps"][0]["text"].startswith("tps stepped slower: ")

    # The history marks the step: its night, its size with the interval, its direction.
    answer = api.get(f"/api/v1/plans/{plan.pk}/history?nights={NIGHTS}")
    assert answer.status_code == 200, answer.text
    table = answer.json()
    (row,) = table["cells"]
    (marked,) = [s for s in row["steps"] if s["metric"] == "throughput"]
    assert marked["batch"] == nights[STEP_AT].pk
    assert marked["created_at"].startswith(nights[STEP_AT].created_at.date().isoformat())
    assert marked["direction"] == "slower" and marked["name"] == "tps"
    assert marked["low_pct"] < marked["change_pct"] < marked["high_pct"] < 0
    assert marked["change_pct"] == pytest.approx(-5, abs=1.5)
    assert marked["before"] == pytest.approx(1000, rel=0.01)
    assert marked["after"] == pytest.approx(950, rel=0.01)
    assert [s for s in row["steps"] if s["metric"] == "latency"] == []
    assert table["rule"]["step_max_pvalue"] == 1e-4 and table["rule"]["step_nights"] == 60

    # The page lists it under the cell's chart, and its chart marks it at the night's place.
    client = Client()
    client.force_login(owner)
    page = client.get(f"/plans/{plan.pk}/history?nights={NIGHTS}")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'<a href="/batches/{nights[STEP_AT].pk}/results">' in html
    assert marked["text"] in html
    (series,) = history.plan_history(plan=plan, nights=NIGHTS).chart()["cells"]
    assert [s["index"] for s in series["steps"]] == [STEP_AT]
