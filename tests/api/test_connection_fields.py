"""Connection fields through the API and the pages: a bad value is a 400 naming the field
when it is saved, and a stored secret is removed when the target or load host is pointed
elsewhere without a new one (both the form and the API say so)."""

from __future__ import annotations

import tempfile

import pytest
from django.contrib.auth.models import Permission

from runs.models import LoadHost, Target
from tests.servers import SSHKey

TARGET = {"name": "db", "host": "db.example.com", "port": 3306, "user": "bench",
          "password": "stored-secret"}  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("host", "db.example.com\nmysql-host=evil"),
        ("host", "$(reboot)"),
        ("user", "bench$(id)"),
        ("database", "sb\ntest"),
        ("port", 70000),
    ],
)
def test_a_bad_target_field_is_a_400_at_save_naming_it(api, field, value):
    answer = api.post("/api/v1/targets", json={**TARGET, field: value})
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field
    assert not Target.objects.exists()


def test_a_bad_load_host_field_and_notify_address_are_400s(api, local_host):
    host = {"name": "lg", "kind": "ssh", "address": "10.0.0.9;id", "user": "bench"}
    answer = api.post("/api/v1/load-hosts", json=host)
    assert (answer.status_code, answer.json()["field"]) == (400, "address")
    plan = {"name": "p", "load_host": local_host.pk, "test": "cpu", "threads": [1],
            "notify_emails": "dba@example.com\n$(reboot)"}  # fmt: skip
    answer = api.post("/api/v1/plans", json=plan)
    assert (answer.status_code, answer.json()["field"]) == (400, "notify_emails")


def test_the_api_removes_the_password_when_the_target_moves_without_one(api):
    t = api.post("/api/v1/targets", json=TARGET).json()["id"]

    assert api.patch(f"/api/v1/targets/{t}", json={"database": "d2"}).json()["has_password"]
    moved = api.patch(f"/api/v1/targets/{t}", json={"port": 3307})
    assert moved.status_code == 200 and moved.json()["has_password"] is False
    again = api.patch(f"/api/v1/targets/{t}", json={"host": "db2", "password": "new-pw"})
    assert again.json()["has_password"] is True
    assert Target.objects.get(pk=t).password == "new-pw"

    schema = api.get("/api/v1/schema/?format=json").text
    assert "unless the update changes the host, port, socket, engine or user" in schema


def test_the_api_removes_the_key_when_the_load_host_moves_without_one(api):
    host = {"name": "lg", "kind": "ssh", "address": "10.0.0.9", "user": "bench",
            "private_key": SSHKey.generate().private}  # fmt: skip
    h = api.post("/api/v1/load-hosts", json=host).json()["id"]
    assert api.patch(f"/api/v1/load-hosts/{h}", json={"port": 2222}).json()["has_private_key"]
    moved = api.patch(f"/api/v1/load-hosts/{h}", json={"address": "10.6.6.6"})
    assert moved.json()["has_private_key"] is False
    assert LoadHost.objects.get(pk=h).private_key == ""


def test_the_page_says_the_password_was_removed_and_why(api, owner):
    api.login("owner", "owner-pass-1")
    api.post("/targets/new", data={**TARGET, "engine": "mariadb", "database": "sbtest"})
    target = Target.objects.get(name="db")
    form = api.get(f"/targets/{target.pk}/edit").text
    assert "unless you change the host, port, socket, engine or user" in form

    fields = {**TARGET, "engine": "mariadb", "database": "sbtest", "password": ""}
    answer = api.post(f"/targets/{target.pk}/edit", data={**fields, "host": "evil.example.com"})
    assert answer.status_code == 302
    page = api.get(answer.headers["Location"]).text
    assert "The stored password was removed: the target points to another server" in page
    assert Target.objects.get(pk=target.pk).password == ""

    refused = api.post(f"/targets/{target.pk}/edit", data={**fields, "host": "a\nb"})
    assert refused.status_code == 200
    assert "is not a host name or an IP address" in refused.text


def test_a_webhook_to_loopback_is_a_400_naming_it(api, settings, local_host):
    settings.BENCHDASH_WEBHOOK_ALLOW_PRIVATE = False
    plan = {"name": "p", "load_host": local_host.pk, "test": "cpu", "threads": [1],
            "notify_webhook": "http://localhost:8000/api/v1/targets"}  # fmt: skip
    answer = api.post("/api/v1/plans", json=plan)
    assert (answer.status_code, answer.json()["field"]) == (400, "notify_webhook")
    assert "loopback address" in answer.json()["message"]


def test_a_targets_restart_opt_in_is_checked_at_save_and_holds_no_secret(api, owner):
    # Who may opt in, and what the operator allows: tests/api/test_restart_opt_in.py
    owner.user_permissions.add(Permission.objects.get(codename="manage_restarts"))
    service = {"command": "test-service", "values": {"server": "benchdash-mariadb-x"},
               "include": f"{tempfile.gettempdir()}/99-benchdash.cnf"}  # fmt: skip
    shell = {**service, "command": "systemctl restart mariadb; id"}
    answer = api.post("/api/v1/targets", json={**TARGET, "restart_mode": "service",
                                               "restart_config": shell})  # fmt: skip
    assert (answer.status_code, answer.json()["field"]) == (400, "restart_config")
    secret = {**service, "values": {"server": "--password=hunter2"}}
    answer = api.post("/api/v1/targets", json={**TARGET, "restart_mode": "service",
                                               "restart_config": secret})  # fmt: skip
    assert answer.status_code == 400 and "hunter2" not in answer.text
    answer = api.post("/api/v1/targets", json={**TARGET, "restart_mode": "service",
                                               "restart_config": service})  # fmt: skip
    assert answer.status_code == 201, answer.text
    assert answer.json()["restart_config"] == service
    assert Target.objects.get().restart_mode == "service"
