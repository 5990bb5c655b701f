"""Opting a server into restarts is an operator's act, on the pages and in the admin
(issue 46): the target editor shows an owner without runs.manage_restarts the restart
mode, restart config and server host disabled, with who may set them; such a value sent
all the same is refused on its field and nothing is saved; a user granted it, and staff,
save an allowed command. The rule is runs/services/permissions.py, as for the API."""

from __future__ import annotations

import json
import tempfile

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import Client, RequestFactory
from django.urls import reverse

from runs.models import LoadHost, Target
from tests.web.test_admin import admin_form

INCLUDE = f"{tempfile.gettempdir()}/benchdash-opt-in-page/99-benchdash.cnf"
SERVICE = {"command": "test-service", "values": {"server": "benchdash-opt-in-page"},
           "include": INCLUDE}  # fmt: skip
FIELDS = {"name": "db-1", "engine": "mariadb", "host": "127.0.0.1", "port": "3999",
          "database": "sbtest", "user": "bench"}  # fmt: skip
WHO = "granted the permission runs.manage_restarts"


def opted_in(target: Target, host: LoadHost | None = None) -> Target:
    Target.objects.filter(pk=target.pk).update(
        restart_mode="service", restart_config=SERVICE, server_host=host
    )
    target.refresh_from_db()
    return target


@pytest.fixture
def db_host(db, user) -> LoadHost:
    return LoadHost.objects.create(name="db-host", kind="ssh", address="10.0.0.9", user="root")


def test_the_editor_shows_an_owner_without_it_the_restart_fields_disabled_and_who_may(
    client_in, stored_target, db_host
):
    opted_in(stored_target, db_host)
    page = client_in.get(f"/targets/{stored_target.pk}/edit").content.decode()
    for name in ("restart_mode", "restart_config", "server_host"):
        assert f'name="{name}"' in page
        tag = page.split(f'name="{name}"')[0].rsplit("<", 1)[1] + page.split(f'name="{name}"')[1]
        assert " disabled" in tag.split(">")[0], name
    assert WHO in page


def test_an_owner_without_it_edits_other_fields_and_the_restart_fields_stay(
    client_in, stored_target, db_host
):
    opted_in(stored_target, db_host)
    # What a browser sends: the disabled fields are not in the form's data.
    answer = client_in.post(f"/targets/{stored_target.pk}/edit", {**FIELDS, "database": "d2"})
    assert answer.status_code == 302, answer.content.decode()[:2000]
    stored_target.refresh_from_db()
    assert stored_target.database == "d2"
    assert (stored_target.restart_mode, stored_target.restart_config) == ("service", SERVICE)
    assert stored_target.server_host == db_host


@pytest.mark.parametrize(
    "sent",
    [
        {"restart_mode": "service", "restart_config": '{"command": "test-service"}'},
        {"restart_mode": "", "restart_config": "{}"},
        {"server_host": "db_host"},
    ],
    ids=["opt-in", "opt-out", "server_host"],
)
def test_a_restart_field_sent_by_an_owner_without_it_is_refused_and_nothing_saved(
    client_in, stored_target, db_host, sent
):
    if sent.get("restart_mode") == "":
        opted_in(stored_target)
    if "server_host" in sent:
        sent = {"server_host": str(db_host.pk)}
    before = Target.objects.values().get(pk=stored_target.pk)
    answer = client_in.post(
        f"/targets/{stored_target.pk}/edit", {**FIELDS, "database": "d2", **sent}
    )
    assert answer.status_code == 200
    page = answer.content.decode()
    assert f"{next(iter(sent))}: only staff or a user or group {WHO}" in page
    assert Target.objects.values().get(pk=stored_target.pk) == before


def test_a_new_target_opted_in_by_an_owner_without_it_is_refused(client_in):
    answer = client_in.post(
        "/targets/new", {**FIELDS, "restart_mode": "service", "restart_config": "{}"}
    )
    assert answer.status_code == 200 and WHO in answer.content.decode()
    assert not Target.objects.exists()


def test_a_user_granted_it_opts_a_target_in_with_an_allowed_command(client_in, user, stored_target):
    user.user_permissions.add(Permission.objects.get(codename="manage_restarts"))
    page = client_in.get(f"/targets/{stored_target.pk}/edit").content.decode()
    assert WHO not in page
    sent = {**FIELDS, "restart_mode": "service", "restart_config": json.dumps(SERVICE)}
    answer = client_in.post(f"/targets/{stored_target.pk}/edit", sent)
    assert answer.status_code == 302, answer.content.decode()[:2000]
    stored_target.refresh_from_db()
    assert (stored_target.restart_mode, stored_target.restart_config) == ("service", SERVICE)
    argv = {**SERVICE, "command": ["/bin/sh", "-c", "id"]}
    answer = client_in.post(
        f"/targets/{stored_target.pk}/edit", {**sent, "restart_config": json.dumps(argv)}
    )
    assert answer.status_code == 200 and "never an argv" in answer.content.decode()
    stored_target.refresh_from_db()
    assert stored_target.restart_config == SERVICE


# --- the admin ----------------------------------------------------------------------------


def test_staff_opt_a_target_in_through_the_admin_with_an_allowed_command_only(
    db, django_user_model, stored_target
):
    client_root = Client()
    client_root.force_login(django_user_model.objects.create_superuser("root", "", "root-pass-1"))
    url = reverse("admin:runs_target_change", args=[stored_target.pk])
    data = admin_form(stored_target, restart_mode="service", restart_config=json.dumps(SERVICE))
    assert client_root.post(url, data).status_code == 302
    stored_target.refresh_from_db()
    assert stored_target.restart_config == SERVICE
    argv = json.dumps({**SERVICE, "command": ["/bin/sh", "-c", "id"]})
    answer = client_root.post(url, {**data, "restart_config": argv})
    assert answer.status_code == 200 and "never an argv" in answer.content.decode()
    stored_target.refresh_from_db()
    assert stored_target.restart_config == SERVICE


def test_the_admins_form_refuses_a_user_without_it_on_the_field(db, user, stored_target):
    # The admin lets in staff only, who have it: its form asks the same rule all the same,
    # of a user who may change targets (else every field is read-only there).
    user.user_permissions.add(Permission.objects.get(codename="change_target"))
    user = type(user).objects.get(pk=user.pk)  # its permissions read afresh
    request = RequestFactory().post("/")
    request.user = user
    model_admin = admin.site._registry[Target]
    form_class = model_admin.get_form(request, stored_target, change=True)
    data = admin_form(stored_target, restart_mode="service", restart_config=json.dumps(SERVICE))
    form = form_class(data, instance=stored_target)
    assert not form.is_valid()
    assert WHO in " ".join(str(e) for e in form.errors["restart_mode"])
    stored_target.refresh_from_db()
    assert stored_target.restart_mode == ""
