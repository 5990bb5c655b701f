"""Who may do what, through the pages: an owner, a teammate (a member of a group granted
the permissions) and an outsider (logged in, nothing granted), as healthchecks tests it.
Everyone reads everything; changing, deleting, launching and cancelling are for the owner,
the teammate and staff. The rule itself is runs/services/permissions.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client

from runs.models import Batch, LoadHost, Plan, Status, Target
from tests.servers import SSHKey

TEAM_PERMISSIONS = [
    "change_target", "delete_target", "change_loadhost", "delete_loadhost",
    "change_plan", "delete_plan", "change_batch",
]  # fmt: skip
TARGET_FIELDS = {
    "name": "db-9", "engine": "mariadb", "host": "127.0.0.1", "port": "3999",
    "database": "sbtest", "user": "bench",
}  # fmt: skip
HOST_FIELDS = {"name": "lg-9", "kind": "ssh", "address": "10.0.0.9", "port": "22",
               "user": "bench"}  # fmt: skip
PLAN_FIELDS = {
    "name": "owner's plan", "test": "oltp_read_only", "threads": "1", "repeats": "1",
    "warmup_s": "0", "order_policy": "interleaved", "dataset_policy": "shared",
    "schedule_kind": "", "schedule_timezone": "UTC", "opt_time": "5", "opt_tables": "1",
    "opt_table-size": "100",
}  # fmt: skip


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def people(db, django_user_model):
    owner = django_user_model.objects.create_user("olivia", password="olivia-pass-1")
    teammate = django_user_model.objects.create_user("tom", password="tom-pass-1")
    outsider = django_user_model.objects.create_user("oscar", password="oscar-pass-1")
    team = Group.objects.create(name="dba")
    team.permissions.set(Permission.objects.filter(codename__in=TEAM_PERMISSIONS))
    teammate.groups.add(team)
    return {name: logged_in(u) for name, u in
            (("owner", owner), ("teammate", teammate), ("outsider", outsider))}  # fmt: skip


@pytest.fixture
def owned(people):
    """What the owner made through the pages: a target, an SSH load host, a plan."""
    owner = people["owner"]
    owner.post("/targets/new", {**TARGET_FIELDS, "password": "owner-secret"})
    owner.post("/load-hosts/new", {**HOST_FIELDS, "private_key": SSHKey.generate().private})
    target, host = Target.objects.get(name="db-9"), LoadHost.objects.get(name="lg-9")
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    answer = owner.post("/plans/new", {**PLAN_FIELDS, "target": target.pk, "load_host": local.pk})
    assert answer.status_code == 302, answer.content.decode()[:2000]
    plan = Plan.objects.get(name="owner's plan")
    return target, host, plan


def test_what_a_user_creates_is_theirs(owned):
    target, host, plan = owned
    assert target.created_by.username == host.created_by.username == "olivia"
    assert plan.created_by.username == "olivia"


def test_everyone_reads_everything(people, owned):
    target, host, plan = owned
    for url in ("/targets/", f"/targets/{target.pk}/", "/load-hosts/", f"/load-hosts/{host.pk}/",
                "/plans/", f"/plans/{plan.pk}/", f"/plans/{plan.pk}/history"):  # fmt: skip
        assert people["outsider"].get(url).status_code == 200, url
    for url in (f"/targets/{target.pk}/", f"/load-hosts/{host.pk}/"):
        assert "<dt>Owner</dt><dd>olivia</dd>" in people["outsider"].get(url).content.decode()
    # The form to change a target is for who may change it.
    assert people["outsider"].get(f"/targets/{target.pk}/edit").status_code == 403


def test_an_outsider_may_change_nothing_and_is_told_who_may(people, owned):
    target, host, plan = owned
    outsider = people["outsider"]
    refused = [
        outsider.post(f"/targets/{target.pk}/edit", {**TARGET_FIELDS, "host": "evil.example"}),
        outsider.post(f"/targets/{target.pk}/delete"),
        outsider.post(f"/load-hosts/{host.pk}/edit", {**HOST_FIELDS, "address": "evil.example"}),
        outsider.post(f"/load-hosts/{host.pk}/scan"),
        outsider.post(f"/load-hosts/{host.pk}/confirm", {"fingerprint": "SHA256:x"}),
        outsider.post(f"/load-hosts/{host.pk}/facts"),
        outsider.post(f"/load-hosts/{host.pk}/delete"),
        outsider.post(f"/plans/{plan.pk}/", {**PLAN_FIELDS, "name": "mine now",
                                             "target": target.pk, "load_host": host.pk}),
        outsider.post(f"/plans/{plan.pk}/launch"),
        outsider.post(f"/plans/{plan.pk}/delete"),
    ]  # fmt: skip
    for answer in refused:
        assert answer.status_code == 403
        page = answer.content.decode()
        assert "Not allowed" in page and "only the owner of the" in page and "olivia" in page
    assert "runs.change_target" in refused[0].content.decode()
    assert "runs.delete_loadhost" in refused[6].content.decode()

    target.refresh_from_db()
    host.refresh_from_db()
    plan.refresh_from_db()
    assert (target.host, target.password) == ("127.0.0.1", "owner-secret")
    assert host.address == "10.0.0.9" and plan.name == "owner's plan"
    assert not Batch.objects.exists()


def test_an_outsider_may_not_point_a_plan_of_their_own_at_anothers_target(people, owned):
    target, host, _ = owned
    local = LoadHost.objects.get(name="local")
    outsider = people["outsider"]

    # Their own load host with the owner's target would carry its password to them.
    outsider.post("/load-hosts/new", {**HOST_FIELDS, "name": "mine", "address": "10.6.6.6"})
    mine = LoadHost.objects.get(name="mine")
    for load_host in (mine, local):
        fields = {**PLAN_FIELDS, "name": "sneaky", "target": target.pk, "load_host": load_host.pk}
        page = outsider.post("/plans/new", fields).content.decode()
        assert "you may not run benchmarks with the target db-9" in page
        preflight = outsider.post("/plans/preflight", fields).json()
        assert preflight["ok"] is False and preflight["checks"] == []
        assert preflight["errors"][0]["field"] == "target"
    assert not Plan.objects.filter(name="sneaky").exists()

    # Nor may they run their benchmarks on the owner's load host.
    fields = {**PLAN_FIELDS, "name": "sneaky", "test": "cpu", "load_host": host.pk}
    assert "with the load host lg-9" in outsider.post("/plans/new", fields).content.decode()

    # With no one's target and the built-in local host, a plan of their own is theirs.
    fields = {**PLAN_FIELDS, "name": "cpu of mine", "test": "cpu", "load_host": local.pk}
    del fields["opt_tables"], fields["opt_table-size"]
    assert outsider.post("/plans/new", fields).status_code == 302
    assert Plan.objects.filter(name="cpu of mine", created_by__username="oscar").exists()


def test_a_teammate_with_the_permissions_may_change_launch_and_cancel(people, owned):
    target, _, plan = owned
    teammate = people["teammate"]

    answer = teammate.post(f"/targets/{target.pk}/edit", {**TARGET_FIELDS, "database": "other"})
    assert answer.status_code == 302
    target.refresh_from_db()
    assert target.database == "other" and target.created_by.username == "olivia"

    launched = teammate.post(f"/plans/{plan.pk}/launch")
    assert launched.status_code == 302
    batch = Batch.objects.get(plan=plan)
    assert people["outsider"].post(f"/batches/{batch.pk}/cancel").status_code == 403
    batch.refresh_from_db()
    assert batch.status == Status.QUEUED

    people["owner"].post(f"/batches/{batch.pk}/cancel")  # the plan is the owner's
    batch.refresh_from_db()
    assert batch.status == Status.CANCELLED


def test_staff_may_do_everything(people, owned, django_user_model):
    target, host, plan = owned
    boss = django_user_model.objects.create_user("sam", password="sam-pass-1", is_staff=True)
    staff = logged_in(boss)
    assert (
        staff.post(f"/targets/{target.pk}/edit", {**TARGET_FIELDS, "port": "4000"}).status_code
        == 302
    )
    assert staff.post(f"/load-hosts/{host.pk}/delete").status_code == 302
    assert staff.post(f"/plans/{plan.pk}/delete").status_code == 302
    assert not Plan.objects.filter(pk=plan.pk).exists()
    assert not LoadHost.objects.filter(pk=host.pk).exists()


def connections(mariadb_server) -> int:
    """Logins the private MariaDB has seen (this one included)."""
    db = mariadb_server.root_connect()
    try:
        cursor = db.cursor()
        cursor.execute("SHOW GLOBAL STATUS LIKE 'Connections'")
        return int(cursor.fetchone()[1])
    finally:
        db.close()


def test_the_plan_check_logs_in_with_a_stored_password_for_who_may_use_the_target_only(
    people, target, mariadb_server, django_user_model
):
    target.created_by = django_user_model.objects.get(username="olivia")
    target.save()
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    fields = {**PLAN_FIELDS, "target": target.pk, "load_host": local.pk}
    logins, answers = {}, {}
    for name in ("owner", "teammate", "outsider"):
        before = connections(mariadb_server)
        answers[name] = people[name].post("/plans/check", fields)
        assert answers[name].status_code == 200, answers[name].content[:500]
        logins[name] = connections(mariadb_server) - before - 1  # less this count's own

    assert logins["owner"] >= 1 and logins["teammate"] >= 1
    assert logins["outsider"] == 0, logins
    warnings = answers["outsider"].json()["warnings"]
    assert any("you may not run benchmarks with the target" in w for w in warnings), warnings


def test_an_outsider_may_not_attach_an_imported_log_to_anothers_target_from_the_page(people, owned):
    # issue 26 item 8: the import page, like the API (tests/api/test_permissions.py), asks
    # who may use the target before results go on it
    target, _, _ = owned
    log = (Path(__file__).parents[1] / "fixtures" / "sysbench" / "cpu.txt").read_text()
    fields = {"text": log, "action": "save", "label": "not mine", "target": target.pk}

    page = people["outsider"].post("/import", fields)

    assert page.status_code == 403
    assert "you may not attach results to the target db-9" in page.content.decode()
    assert not Batch.objects.exists()
    answer = people["teammate"].post("/import", {**fields, "label": "the team's"})
    assert answer.status_code == 302, answer.content.decode()[:2000]
    assert Batch.objects.get().target == target
