"""Fixtures of the page tests: named users, a logged-in client, and batches made of
stored rows (no worker needed to read a page)."""

from __future__ import annotations

import pytest
from django.test import Client

from runs.models import LoadHost, Plan, Target


@pytest.fixture
def user(db, django_user_model):
    return django_user_model.objects.create_user("ana", password="ana-pass-123")


@pytest.fixture
def client_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def stored_target(db, user) -> Target:
    """A target of ana's (the logged-in user of `client_in`)."""
    return Target.objects.create(
        name="db-1", engine="mariadb", host="127.0.0.1", port=3999, database="sbtest",
        user="bench", password="s3cret-target-pw", cpu_cores=4, disk_count=2, created_by=user,
    )  # fmt: skip


@pytest.fixture
def stored_plan(db, stored_target, user) -> Plan:
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    return Plan.objects.create(
        name="insert scaling",
        target=stored_target,
        load_host=local,
        test="oltp_insert",
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 100},
        threads=[1, 2],
        server_settings={"innodb_flush_log_at_trx_commit": ["1", "2"]},
        dataset_policy="fresh",
        created_by=user,
    )
