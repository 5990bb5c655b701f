"""Saving targets, load hosts and plans: a stored secret never follows them to another
address, and every connection field is checked when it is saved, not when a night's run
trips on it."""

from __future__ import annotations

import pytest

from runs.errors import InvalidInput
from runs.models import LoadHost, Plan, Target
from runs.services import definitions
from tests.servers import SSHKey

STORED_KEY = SSHKey.generate().private


@pytest.fixture
def target(db) -> Target:
    return Target.objects.create(
        name="db", engine="mariadb", host="db.example.com", port=3306, database="sbtest",
        user="bench", password="stored-secret",
    )  # fmt: skip


@pytest.fixture
def ssh_host(db) -> LoadHost:
    return LoadHost.objects.create(
        name="lg", kind="ssh", address="10.0.0.9", port=22, user="bench",
        private_key=STORED_KEY,
    )  # fmt: skip


def saved(obj, **changes):
    fresh = type(obj).objects.get(pk=obj.pk)  # as a form or the API gets it
    for name, value in changes.items():
        setattr(fresh, name, value)
    if isinstance(fresh, Target):
        return definitions.target_save(target=fresh)
    return definitions.loadhost_save(load_host=fresh)


@pytest.mark.parametrize(
    "change",
    [
        {"host": "evil.example.com"},
        {"port": 3307},
        {"host": "", "socket": "/run/mysqld/mysqld.sock"},
        {"engine": "mysql"},
        {"user": "root"},
    ],
)
def test_pointing_a_target_elsewhere_clears_its_stored_password(target, change):
    assert saved(target, **change).password == ""
    assert Target.objects.get(pk=target.pk).password == ""


def test_a_target_keeps_its_password_when_it_stays_where_it_is(target):
    assert saved(target, database="other", name="renamed", cpu_cores=8).password == "stored-secret"


def test_a_new_password_given_with_the_move_is_kept(target):
    fresh = Target.objects.get(pk=target.pk)
    fresh.host = "db2.example.com"
    definitions.target_save(target=fresh, password="the-new-one")
    assert Target.objects.get(pk=target.pk).password == "the-new-one"


@pytest.mark.parametrize("change", [{"address": "10.6.6.6"}, {"user": "root"}])
def test_pointing_a_load_host_elsewhere_clears_its_key(ssh_host, change):
    assert saved(ssh_host, **change).private_key == ""


def test_a_load_host_keeps_its_key_on_another_port_or_name(ssh_host):
    assert saved(ssh_host, port=2222, name="lg-2").private_key == STORED_KEY


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("host", "db.example.com\nmysql-host=evil"),
        ("host", "$(reboot)"),
        ("host", "db example"),
        ("port", 70000),
        ("port", 0),
        ("user", "bench$(id)"),
        ("user", "bench\n"),
        ("database", "sbtest`; drop"),
        ("database", "a b"),
        ("socket", "/tmp/my sock"),
        ("socket", "relative.sock"),
    ],
)
def test_a_bad_connection_field_is_refused_at_save_naming_it(target, field, value):
    changes = {field: value, **({"host": ""} if field == "socket" else {})}
    with pytest.raises(InvalidInput) as refused:
        saved(target, **changes)
    assert refused.value.field == field
    assert Target.objects.get(pk=target.pk).host == "db.example.com"


def test_a_password_with_a_newline_is_refused_and_never_repeated(target):
    with pytest.raises(InvalidInput) as refused:
        definitions.target_save(target=target, password="pw\nmysql-host=evil")
    assert refused.value.field == "password" and "evil" not in str(refused.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("address", "10.0.0.9;id"),
        ("address", "$(curl evil)"),
        ("user", "root\nProxyCommand"),
        ("port", 0),
    ],
)
def test_a_bad_load_host_field_is_refused_at_save_naming_it(ssh_host, field, value):
    with pytest.raises(InvalidInput) as refused:
        saved(ssh_host, **{field: value})
    assert refused.value.field == field


@pytest.mark.parametrize(
    "host", ["db.example.com", "db-1", "127.0.0.1", "::1", "2001:db8::1", "under_score"]
)
def test_host_names_and_addresses_are_accepted(target, host):
    assert saved(target, host=host).host == host


def test_every_notify_address_must_be_an_email_address(db):
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan(name="p", load_host=local, test="cpu", threads=[1])
    plan.notify_emails = "dba@example.com\nops@example.com $(reboot)"
    with pytest.raises(InvalidInput) as refused:
        definitions.plan_save(plan=plan)
    assert refused.value.field == "notify_emails"
    assert "'ops@example.com $(reboot)' is not an email address" in refused.value.message

    plan.notify_emails = "dba@example.com\n\nops@example.com\n"
    definitions.plan_save(plan=plan)
    assert Plan.objects.get(name="p").notify_emails.splitlines()[0] == "dba@example.com"
