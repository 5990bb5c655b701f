"""'Test connection' against the private MariaDB: version, whether the account may SET
GLOBAL (read from its privileges, never tried), log_bin, max_connections."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from runs.models import Batch, Plan, Target
from runs.services import definitions

pytestmark = pytest.mark.slow


def test_the_page_shows_what_a_benchmark_depends_on(target, django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_user("ana", password="x-123456"))
    html = client.post(f"/targets/{target.pk}/").content.decode()
    assert "MariaDB" in html
    assert "granted SUPER" in html
    assert "<dt>log_bin</dt><dd>ON</dd>" in html
    assert "<dt>max_connections</dt><dd>20</dd>" in html
    assert target.password not in html


def test_an_account_without_super_may_not_change_settings(target, mariadb_server):
    user = f"weak{uuid.uuid4().hex[:6]}"
    mariadb_server.execute(
        f"CREATE USER '{user}'@'%' IDENTIFIED BY 'weak-pass'",
        f"GRANT SELECT ON *.* TO '{user}'@'%'",
    )
    try:
        weak = Target.objects.create(
            name="weak", host=target.host, port=target.port, database=target.database,
            user=user, password="weak-pass",
        )  # fmt: skip
        check = definitions.target_test_connection(target=weak)
        assert check.ok and check.may_change_settings is False
        assert "neither SUPER nor SYSTEM_VARIABLES_ADMIN" in check.privileges
    finally:
        mariadb_server.execute(f"DROP USER '{user}'@'%'")


def test_a_wrong_password_is_said_plainly(target):
    target.password = "wrong"
    check = definitions.target_test_connection(target=target)
    assert not check.ok and "1045" in check.error and "password" in check.hint


def test_save_and_launch_refused_at_launch_saves_nothing(target, local_host, django_user_model):
    # issue 37: "Save and launch" refused at launch (the server allows 20 connections) still
    # saved the plan, and the message did not say so.
    ana = django_user_model.objects.create_user("ana", password="x-123456")
    Target.objects.filter(pk=target.pk).update(created_by=ana)
    client = Client()
    client.force_login(ana)
    post = {
        "name": "too many threads", "target": str(target.pk), "load_host": str(local_host.pk),
        "test": "oltp_read_only", "threads": "1,40", "repeats": "1", "warmup_s": "0",
        "order_policy": "interleaved", "dataset_policy": "shared", "schedule_timezone": "UTC",
        "opt_time": "5", "opt_tables": "1", "opt_table-size": "100", "action": "launch",
    }  # fmt: skip

    refused = client.post("/plans/new", post)

    page = refused.content.decode()
    assert refused.status_code == 200
    assert "Not saved: the plan cannot be launched" in page and "max_connections is 20" in page
    assert not Plan.objects.exists() and not Batch.objects.exists()

    saved = client.post("/plans/new", {**post, "threads": "1,2", "action": "save"})
    plan = Plan.objects.get()
    assert saved.status_code == 302 and plan.threads == [1, 2]
    again = client.post(f"/plans/{plan.pk}/", {**post, "threads": "1,2,40"})
    assert "Not saved" in again.content.decode()
    plan.refresh_from_db()
    assert plan.threads == [1, 2] and not Batch.objects.exists()
