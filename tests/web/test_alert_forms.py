"""The forms of the history page and the batch page: an alert decided, an annotation added
and removed, a batch's notes and tags; refused to who may not change the plan. Nights are
stored as a worker leaves them (tests/api/test_history.py)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils.html import escape

from runs.models import Alert, Annotation, Batch, LoadHost, Plan
from runs.services.nightly import alerts
from tests.api.test_history import confirmed, stored_night

QUIET = [1000, 1012, 991, 1005, 997, 1008, 994, 1003, 999, 1010, 988, 1002]


@pytest.fixture
def alerted(transactional_db, user) -> Alert:
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name="nightly", load_host=local, test="oltp_insert", threads=[1], created_by=user
    )
    nights(plan, [*QUIET, 900])
    alert = Alert.objects.get()
    confirmed(alert.confirmation, 900.0)
    alert.refresh_from_db()
    return alert


def nights(plan: Plan, values: list[float]) -> None:
    start = plan.batches.filter(launched_by="schedule").count()
    for n, tps in enumerate(values, start=start):
        alerts.batch_judge(batch=stored_night(plan, n, tps))


def test_the_history_page_shows_the_alert_and_decides_it(client_in, alerted):
    history = f"/plans/{alerted.plan_id}/history"
    html = client_in.get(history).content.decode()
    assert 'id="history-alerts"' in html and ">confirmed</span>" in html
    assert "1 in all: 1 confirmed by a re-run, 0 noise" in html
    assert escape(alerted.verdict.splitlines()[0]) in html

    answer = client_in.post(
        f"/alerts/{alerted.pk}/decision", {"decision": "accept", "comment": "new disk"}
    )
    assert answer.status_code == 302 and answer["Location"] == history
    alerted.refresh_from_db()
    assert alerted.state == Alert.State.ACCEPTED and alerted.comment == "new disk"
    html = client_in.get(history).content.decode()
    assert "Baseline since" in html and ">accepted</span>" in html
    again = client_in.post(f"/alerts/{alerted.pk}/decision", {"decision": "dismiss"}, follow=True)
    assert "an alert accepted cannot be dismissed" in again.content.decode()


def test_annotations_are_added_and_removed_from_the_page(client_in, alerted):
    plan = alerted.plan_id
    client_in.post(f"/plans/{plan}/annotations", {"at": "2030-01-02T03:04", "text": "10.11.9"})
    (note,) = Annotation.objects.all()
    assert note.text == "10.11.9" and note.at.year == 2030 and note.created_by is not None
    assert "10.11.9" in client_in.get(f"/plans/{plan}/history").content.decode()
    refused = client_in.post(f"/plans/{plan}/annotations", {"at": "soon", "text": "x"}, follow=True)
    assert "not a date and time" in refused.content.decode()
    client_in.post(f"/annotations/{note.pk}/delete")
    assert not Annotation.objects.exists()


def test_notes_and_tags_from_the_batch_page(client_in, alerted):
    night = alerted.batch_id
    assert 'id="batch-notes"' in client_in.get(f"/batches/{night}/").content.decode()
    client_in.post(
        f"/batches/{night}/notes", {"notes": "kernel 6.1.0-27", "tags": "kernel, ,upgrade"}
    )
    batch = Batch.objects.get(pk=night)
    assert (batch.notes, batch.tags) == ("kernel 6.1.0-27", ["kernel", "upgrade"])


def test_who_may_not_change_the_plan_decides_nothing(alerted, django_user_model):
    other = Client()
    other.force_login(django_user_model.objects.create_user("bo", password="bo-pass-123"))
    assert other.get(f"/plans/{alerted.plan_id}/history").status_code == 200
    assert other.post(f"/alerts/{alerted.pk}/decision", {"decision": "dismiss"}).status_code == 403
    assert other.post(f"/batches/{alerted.batch_id}/notes", {"notes": "x"}).status_code == 403
    alerted.refresh_from_db()
    assert alerted.state == Alert.State.CONFIRMED


def test_the_alerts_and_annotations_cost_the_history_page_two_queries(
    client_in, alerted, django_assert_max_num_queries
):
    for text in ("10.11.9", "new kernel"):
        Annotation.objects.create(plan=alerted.plan, at=alerted.batch.created_at, text=text)
    nights(alerted.plan, [905.0, 899.0])  # two more nights at the new level
    # 6 as tests/web/test_history_page.py bounds it, whatever the nights, and 2 more.
    with django_assert_max_num_queries(8):
        page = client_in.get(f"/plans/{alerted.plan_id}/history")
    assert page.status_code == 200
    assert page.content.decode().count('<tr class="alert-') == Alert.objects.count() >= 1
