"""Rows stored before validation existed: a load host whose address is no host name, a port
out of range, a target whose host is no host name. Scan, preflight and launch refuse them
with a 400 naming the field, from the API and from the pages, instead of crashing in the
SSH layer or a database driver; saving such values again is refused the same way."""

from __future__ import annotations

import pytest
from django.test import Client

from runs.models import Batch, LoadHost, Plan, Target
from tests.web.test_setup_pages import PLAN_POST


@pytest.fixture
def bad_host(transactional_db, owner) -> LoadHost:
    # Stored as an older benchdash stored it: straight into the table, no checks. The
    # token's user owns it, so that permissions let the request reach the check.
    return LoadHost.objects.create(
        name="old-lg", kind="ssh", address="bad..host", user="bench", created_by=owner
    )


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def _refused(answer, field: str, *words: str) -> None:
    assert answer.status_code == 400, answer.content[:500]
    body = answer.json()
    assert body["field"] == field, body
    for word in words:
        assert word in body["message"], body


def test_a_stored_address_that_is_no_host_name_is_a_400_on_scan(api, bad_host):
    _refused(api.post(f"/api/v1/load-hosts/{bad_host.pk}/scan"), "address", "bad..host")


def test_a_stored_port_out_of_range_is_a_400_on_scan(api, bad_host):
    LoadHost.objects.filter(pk=bad_host.pk).update(address="127.0.0.1", port=70000)
    _refused(api.post(f"/api/v1/load-hosts/{bad_host.pk}/scan"), "port", "70000")


def test_preflight_and_launch_name_the_load_hosts_field(api, bad_host, offline_target, owner):
    plan = Plan.objects.create(
        name="old plan", target=offline_target, load_host=bad_host, threads=[1], created_by=owner
    )
    _refused(api.post(f"/api/v1/plans/{plan.pk}/preflight"), "load_host.address", "bad..host")
    _refused(api.post(f"/api/v1/plans/{plan.pk}/launch"), "load_host.address", "bad..host")
    assert not Batch.objects.exists()


def test_preflight_names_the_targets_field(api, local_host, owner):
    target = Target.objects.create(
        name="old-pg", engine="postgresql", host="bad..host", database="sbtest", user="bench",
        created_by=owner,
    )  # fmt: skip
    plan = Plan.objects.create(
        name="old plan", target=target, load_host=local_host, threads=[1], created_by=owner
    )
    _refused(api.post(f"/api/v1/plans/{plan.pk}/preflight"), "target.host", "bad..host")


def test_such_values_are_not_stored_again(api, bad_host):
    _refused(
        api.post(
            "/api/v1/load-hosts",
            json={"name": "new-lg", "kind": "ssh", "address": "bad..host", "user": "bench"},
        ),
        "address",
    )
    _refused(api.patch(f"/api/v1/load-hosts/{bad_host.pk}", json={"user": "root"}), "address")
    _refused(
        api.post(
            "/api/v1/targets",
            json={"name": "t", "host": "bad..host", "database": "sbtest", "user": "bench"},
        ),
        "host",
    )


def test_the_host_page_shows_the_stored_address_at_fault(browser, bad_host):
    page = browser.post(f"/load-hosts/{bad_host.pk}/scan")
    assert page.status_code == 400
    assert "address: &#x27;bad..host&#x27; is not a host name" in page.content.decode()


def test_the_plan_editors_preflight_names_the_field(browser, bad_host, owner):
    target = Target.objects.create(
        name="db-1", host="127.0.0.1", port=3999, database="sbtest", user="bench",
        created_by=owner,
    )  # fmt: skip
    form = {**PLAN_POST, "target": str(target.pk), "load_host": str(bad_host.pk)}
    answer = browser.post("/plans/preflight", form)
    assert answer.status_code == 400
    (error,) = answer.json()["errors"]
    assert error["field"] == "load_host.address" and "bad..host" in error["message"]


def test_reading_the_facts_of_such_a_host_says_why_it_cannot_be_reached(browser, bad_host):
    page = browser.post(f"/load-hosts/{bad_host.pk}/facts")
    assert page.status_code == 200
    assert "cannot reach old-lg: address: &#x27;bad..host&#x27;" in page.content.decode()
