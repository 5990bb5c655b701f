"""A clocked schedule in the past would fire as soon as beat saw it: it is refused with a
400 on clocked_at (a form error on the plan's page), unless the request asks to run it now.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from runs.models import Plan
from runs.services.nightly import schedules
from tests.web.test_setup_pages import PLAN_POST


@pytest.fixture
def plan(offline_target, local_host, owner) -> Plan:
    # The token's user owns it: only an owner may schedule a plan.
    return Plan.objects.create(
        name="once", target=offline_target, load_host=local_host, test="oltp_insert",
        threads=[1], created_by=owner,
    )  # fmt: skip


def test_a_clocked_time_in_the_past_is_refused(api, plan):
    past = timezone.now() - timedelta(hours=1)
    answer = api.put(f"/api/v1/plans/{plan.pk}/schedule", json={"clocked_at": past.isoformat()})

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "clocked_at"
    assert "is in the past" in answer.json()["message"]
    assert not PeriodicTask.objects.exists()


def test_a_clocked_time_read_in_its_zone_is_in_the_past_there(api, plan):
    # Five minutes ago on Tokyo's clocks, read as UTC, would be nine hours ahead.
    now_in_tokyo = timezone.now().astimezone(timezone.get_fixed_timezone(9 * 60))
    earlier = (now_in_tokyo - timedelta(minutes=5)).replace(tzinfo=None)
    answer = api.put(
        f"/api/v1/plans/{plan.pk}/schedule",
        json={"clocked_at": earlier.isoformat(), "timezone": "Asia/Tokyo"},
    )
    assert answer.status_code == 400
    assert answer.json()["field"] == "clocked_at"


def test_a_clocked_time_in_the_past_is_taken_when_asked_to_run_now(api, plan):
    past = timezone.now() - timedelta(minutes=1)
    answer = api.put(
        f"/api/v1/plans/{plan.pk}/schedule",
        json={"clocked_at": past.isoformat(), "run_now": True},
    )

    assert answer.status_code == 200, answer.text
    assert "run_now" not in answer.json()
    task = PeriodicTask.objects.get()
    assert task.enabled and task.one_off and task.clocked.clocked_time < timezone.now()


def test_a_clocked_time_ahead_is_taken(api, plan):
    ahead = timezone.now() + timedelta(days=1)
    answer = api.put(f"/api/v1/plans/{plan.pk}/schedule", json={"clocked_at": ahead.isoformat()})
    assert answer.status_code == 200, answer.text
    assert answer.json()["kind"] == "clocked"


@pytest.fixture
def browser(owner) -> Client:
    """The plan's owner in a browser: only an owner may change its schedule."""
    client = Client()
    client.force_login(owner)
    return client


def _page_form(plan: Plan, **changes: str) -> dict[str, object]:
    return {
        **PLAN_POST,
        "name": plan.name,
        "target": str(plan.target_id),
        "load_host": str(plan.load_host_id),
        "schedule_enabled": "on",
        **changes,
    }


def test_the_plan_page_shows_a_past_time_as_a_form_error(browser, plan):
    past = timezone.now() - timedelta(hours=2)
    form = _page_form(
        plan, schedule_kind="clocked", schedule_clocked_at=past.strftime("%Y-%m-%dT%H:%M")
    )
    page = browser.post(f"/plans/{plan.pk}/", form)

    assert page.status_code == 200  # the form again, with its error
    html = page.content.decode()
    assert 'data-field="schedule_clocked_at"' in html
    assert "schedule_clocked_at: " in html and "is in the past" in html
    assert not PeriodicTask.objects.exists()

    form["schedule_run_now"] = "on"
    assert browser.post(f"/plans/{plan.pk}/", form).status_code == 302
    assert PeriodicTask.objects.get().clocked is not None


def test_the_plan_page_keeps_a_clocked_schedule_that_fired(browser, plan):
    at = timezone.now() - timedelta(days=1)
    task = schedules.plan_schedule_set(
        plan=plan, cron=None, interval_s=None, clocked_at=at, timezone="UTC", enabled=True,
        run_now=True,
    )  # fmt: skip
    PeriodicTask.objects.filter(pk=task.pk).update(total_run_count=1, last_run_at=at)

    page = browser.get(f"/plans/{plan.pk}/").content.decode()
    shown = at.strftime("%Y-%m-%dT%H:%M:%S")
    assert f'value="{shown}"' in page and '<option value="clocked" selected>' in page

    # Saved again as it stands (another field changed): the schedule is kept, not refired.
    form = _page_form(plan, schedule_kind="clocked", schedule_clocked_at=shown, repeats="4")
    assert browser.post(f"/plans/{plan.pk}/", form).status_code == 302
    task.refresh_from_db()
    assert task.total_run_count == 1 and task.last_run_at is not None
