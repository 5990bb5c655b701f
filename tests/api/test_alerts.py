"""Alerts, notes, tags and annotations from the API, on nights stored as a worker leaves
them (tests/api/test_history.py): a wild night ruled noise by its re-run, a re-run that
failed, the lifecycle's rules, and who may write what."""

from __future__ import annotations

import pytest
from django.core import mail
from django.utils import timezone

from runs.models import Alert, Batch, Plan, Status
from runs.services import tokens
from runs.services.nightly import alerts
from tests.api.conftest import Api
from tests.api.test_history import confirmed, stored_night

QUIET = [1000, 1012, 991, 1005, 997, 1008, 994, 1003, 999, 1010, 988, 1002]


@pytest.fixture
def plan(local_host, owner) -> Plan:
    return Plan.objects.create(
        name="nightly inserts",
        load_host=local_host,
        test="oltp_insert",
        threads=[1],
        options={"time": 60},
        notify_emails="dba@example.com",
        created_by=owner,
    )


@pytest.fixture
def outsider_api(live_server, outsider) -> Api:
    return Api(live_server.url, tokens.token_create(user=outsider, name="t", expires_in=None)[1])


def nights(plan: Plan, values: list[float]) -> list[Batch]:
    made, start = [], plan.batches.filter(launched_by="schedule").count()
    for n, tps in enumerate(values, start=start):
        made.append(stored_night(plan, n, tps))
        alerts.batch_judge(batch=made[-1])
    return [Batch.objects.get(pk=b.pk) for b in made]


def test_a_wild_night_ruled_noise_by_its_rerun_tells_nobody_and_is_shown(api, plan):
    *_, wild = nights(plan, [*QUIET, 900])
    alert = Alert.objects.get(batch=wild)
    assert alert.state == Alert.State.CONFIRMING
    confirmed(alert.confirmation, 1001.0)  # back at the old level

    alert.refresh_from_db()
    assert alert.state == Alert.State.NOISE
    assert "closer to the nights before it" in alert.verdict
    assert wild.notified == [] and Batch.objects.get(pk=wild.pk).notified == []
    assert mail.outbox == []
    answer = api.get(f"/api/v1/plans/{plan.pk}/alerts")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["counts"] == {**body["counts"], "total": 1, "noise": 1, "confirmed": 0}
    (listed,) = body["alerts"]
    assert listed["status"] == "noise" and listed["confirmation_status"] == "done"
    assert listed["cells"][0]["confirmation"]["verdict"] == "noise"
    # The confirmation is no night of the history, and its check is none.
    table = api.get(f"/api/v1/plans/{plan.pk}/history").json()
    assert alert.confirmation_id not in [n["batch"] for n in table["nights"]]
    assert table["alerts"][0]["status"] == "noise"


def test_a_step_ruled_noise_that_shows_again_the_next_night_is_alerted_again(plan):
    *_, first = nights(plan, [*QUIET, 900])
    confirmed(Alert.objects.get(batch=first).confirmation, 1001.0)  # the re-run was lucky

    (second,) = nights(plan, [901])

    again = Alert.objects.get(batch=second)
    assert again.state == Alert.State.CONFIRMING
    assert again.cells[0]["steps"][0]["batch"] == first.pk


def test_a_failed_rerun_says_the_night_could_not_be_confirmed(api, plan):
    *_, slow = nights(plan, [*QUIET, 900])
    confirm = Alert.objects.get(batch=slow).confirmation
    assert confirm is not None
    Batch.objects.filter(pk=confirm.pk).update(
        status=Status.FAILED,
        error="preflight failed: the server went away",
        finished_at=timezone.now(),
    )
    alerts.batch_judge(batch=Batch.objects.get(pk=confirm.pk))

    listed = api.get(f"/api/v1/alerts/{Alert.objects.get().pk}").json()
    assert listed["status"] == "unconfirmed" and listed["state"] == "confirming"
    assert listed["verdict"] == (
        f"the confirmation batch {confirm.pk} failed (preflight failed: the server went away): "
        "the night could not be confirmed"
    )
    (message,) = mail.outbox
    assert message.subject.endswith("1 of 1 cells slower, could not be confirmed")
    assert "the night could not be confirmed" in message.body
    # Such an alert is for a person to decide.
    decided = api.post(f"/api/v1/alerts/{listed['id']}/decision", json={"decision": "dismiss"})
    assert decided.status_code == 200 and decided.json()["status"] == "dismissed"


def test_the_lifecycle_refuses_what_does_not_follow(api, plan):
    *_, slow = nights(plan, [*QUIET, 900])
    alert = Alert.objects.get(batch=slow)
    path = f"/api/v1/alerts/{alert.pk}/decision"

    early = api.post(path, json={"decision": "acknowledge"})
    assert early.status_code == 400 and early.json()["field"] == "decision"
    assert "still being confirmed" in early.json()["message"]
    confirmed(alert.confirmation, 900.0)
    assert api.post(path, json={"decision": "shrug"}).status_code == 400

    assert api.post(path, json={"decision": "acknowledge"}).json()["status"] == "acknowledged"
    again = api.post(path, json={"decision": "acknowledge"})
    assert again.status_code == 400 and "acknowledged cannot be acknowledged" in again.text
    dismissed = api.post(path, json={"decision": "dismiss", "comment": "the disk was replaced"})
    assert dismissed.json()["comment"] == "the disk was replaced"
    final = api.post(path, json={"decision": "accept"})
    assert final.status_code == 400 and "dismissed cannot be accepted" in final.text
    plan.refresh_from_db()
    assert plan.baseline_from is None
    counts = api.get(f"/api/v1/plans/{plan.pk}/alerts").json()["counts"]
    assert counts == {**counts, "confirmed": 1, "dismissed": 1, "total": 1}


def test_accepting_sets_the_baseline_at_the_steps_night(api, plan):
    *_, slow = nights(plan, [*QUIET, 900])
    alert = Alert.objects.get(batch=slow)
    confirmed(alert.confirmation, 900.0)

    assert api.post(f"/api/v1/alerts/{alert.pk}/decision", json={"decision": "accept"}).ok
    plan.refresh_from_db()
    assert plan.baseline_from == slow.created_at
    (after,) = nights(plan, [902])
    assert after.analysis["status"] == "not enough history"


def test_an_outsider_reads_but_decides_and_writes_nothing(api, outsider_api, plan):
    *_, slow = nights(plan, [*QUIET, 900])
    alert = Alert.objects.get(batch=slow)
    confirmed(alert.confirmation, 900.0)

    assert outsider_api.get(f"/api/v1/alerts/{alert.pk}").status_code == 200
    refused = outsider_api.post(f"/api/v1/alerts/{alert.pk}/decision", json={"decision": "dismiss"})
    assert refused.status_code == 403 and "runs.change_plan" in refused.json()["message"]
    note = {"at": slow.created_at.isoformat(), "text": "kernel upgraded"}
    assert outsider_api.post(f"/api/v1/plans/{plan.pk}/annotations", json=note).status_code == 403
    tags = outsider_api.patch(f"/api/v1/batches/{slow.pk}/notes", json={"tags": ["x"]})
    assert tags.status_code == 403
    assert Alert.objects.get().state == Alert.State.CONFIRMED
    assert Batch.objects.get(pk=slow.pk).tags == []
    assert Api(api.base_url).get(f"/api/v1/alerts/{alert.pk}").status_code in (401, 403)


def test_notes_and_tags_on_a_batch(api, plan):
    (night,) = nights(plan, [1000])
    path = f"/api/v1/batches/{night.pk}/notes"

    written = api.patch(path, json={"notes": "new SSD", "tags": [" upgrade ", "ssd", "upgrade"]})
    assert written.status_code == 200, written.text
    assert written.json() == {"id": night.pk, "notes": "new SSD", "tags": ["upgrade", "ssd"]}
    assert api.patch(path, json={"tags": []}).json()["notes"] == "new SSD"  # notes kept
    bad = api.patch(path, json={"tags": ["ok", ""]})
    assert bad.status_code == 400 and bad.json()["field"] == "tags.1"
    assert api.get(path).json() == {"id": night.pk, "notes": "new SSD", "tags": []}


def test_annotations_on_the_timeline(api, plan):
    at = timezone.now().replace(microsecond=0)
    made = api.post(
        f"/api/v1/plans/{plan.pk}/annotations",
        json={"at": at.isoformat(), "text": "upgraded to 10.11.9"},
    )
    assert made.status_code == 201, made.text
    assert made.json()["created_by"] == "owner"
    empty = api.post(
        f"/api/v1/plans/{plan.pk}/annotations", json={"at": at.isoformat(), "text": " "}
    )
    assert empty.status_code == 400
    listed = api.get(f"/api/v1/plans/{plan.pk}/annotations").json()
    assert [a["text"] for a in listed] == ["upgraded to 10.11.9"]
    assert (
        api.get(f"/api/v1/plans/{plan.pk}/history").json()["annotations"][0]["id"]
        == listed[0]["id"]
    )
    assert api.delete(f"/api/v1/annotations/{made.json()['id']}").status_code == 204
    assert api.get(f"/api/v1/plans/{plan.pk}/annotations").json() == []


def test_a_step_once_alerted_and_dismissed_is_never_new_again(plan, owner):
    # issue 37: a step alerted and dismissed was alerted again ten nights later, the
    # previous night's check not having listed it: only that check's steps counted as seen.
    *_, slow = nights(plan, [*QUIET, 900])
    alert = Alert.objects.get(batch=slow)
    confirmed(alert.confirmation, 900.0)
    alerts.alert_decide(alert=alert, decision="dismiss", user=owner, comment="known")
    *_, last = nights(plan, [899, 903, 897, 901])
    assert Alert.objects.count() == 1
    # The search of last night did not find the step (it happens as nights go by).
    analysis = last.analysis
    for cell in analysis["cells"]:
        cell["steps"] = []
    Batch.objects.filter(pk=last.pk).update(analysis=analysis)

    (tonight,) = nights(plan, [902])

    assert Alert.objects.count() == 1, [a.cells for a in Alert.objects.all()]
    steps = [s for c in tonight.analysis["cells"] for s in c.get("steps", [])]
    assert any(s["batch"] == slow.pk for s in steps), steps
    assert not any(s["new"] for s in steps if s["batch"] == slow.pk)


def test_a_night_alerted_on_its_latency_is_rerun_watching_the_latency(plan):
    # issue 37: the re-run of a night alerted on p95 watched tps and stopped at 3 repeats.
    p95s = [2.0, 2.02, 1.98, 2.01, 1.99, 2.03, 1.97, 2.0, 2.02, 1.98, 2.01, 1.99, 3.0]
    made = []
    for n, p95 in enumerate(p95s):
        night = stored_night(plan, n, QUIET[n % len(QUIET)] if n < 12 else 1000.0)
        for run in night.runs.all():
            run.summary = {**run.summary, "latency_pct_ms": p95}
            run.save(update_fields=["summary"])
        alerts.batch_judge(batch=Batch.objects.get(pk=night.pk))
        made.append(night)

    alert = Alert.objects.get(batch=made[-1])
    assert {s["metric"] for c in alert.cells for s in c["steps"]} == {"latency"}
    assert alert.confirmation is not None
    watched = alert.confirmation.params["auto"]["repeats"]
    assert watched["metric"] == "latency", watched
