"""Opting a server into restarts is an operator's act, through the API (issue 46): the
restart mode, restart config and server host are set or changed only by staff and who
holds runs.manage_restarts (a user or a group); an owner without it gets a 403 naming the
permission, and nothing is saved. A service restart runs a command the operator allowed
(the test settings' `test-service`), never an argv of the user's, and writes its include
inside the operator's folder only."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission

from runs.models import LoadHost, Target
from tests.api.conftest import Api
from tests.api.test_permissions import api_of

TARGET = {"name": "db", "host": "127.0.0.1", "port": 3306, "user": "bench", "password": "pw"}
INCLUDE = Path(tempfile.gettempdir()) / "benchdash-opt-in-test" / "99-benchdash.cnf"
SERVICE = {"command": "test-service", "values": {"server": "benchdash-opt-in-test"},
           "include": str(INCLUDE)}  # fmt: skip


@pytest.fixture
def restarter(transactional_db: None, django_user_model: Any) -> Any:
    """A user of a group granted runs.manage_restarts, and nothing else."""
    user = django_user_model.objects.create_user("rita", password="rita-pass-1")
    group = Group.objects.create(name="operators")
    group.permissions.add(Permission.objects.get(codename="manage_restarts"))
    user.groups.add(group)
    return user


@pytest.fixture
def server_host(transactional_db: None, owner: Any) -> LoadHost:
    return LoadHost.objects.create(
        name="db-host", kind="ssh", address="10.0.0.9", user="root", created_by=owner
    )


def refused(answer: Any, field: str) -> str:
    assert answer.status_code == 403, answer.text
    message = str(answer.json()["message"])
    assert message.startswith(f"{field}: only staff or a user or group granted the permission")
    assert "runs.manage_restarts" in message
    return message


@pytest.mark.parametrize(
    "opt_in",
    [
        {"restart_mode": "service", "restart_config": SERVICE},
        {"restart_mode": "managed", "restart_config": {"installs": [
            {"label": "x", "basedir": "/usr", "datadir": "/var/lib/mysql"}]}},
        {"server_host": "server_host"},
    ],
    ids=["service", "managed", "server_host"],
)  # fmt: skip
def test_an_owner_without_the_permission_may_not_opt_a_new_target_in(api, opt_in, server_host):
    if "server_host" in opt_in:
        opt_in = {"server_host": server_host.pk}
    refused(api.post("/api/v1/targets", json={**TARGET, **opt_in}), next(iter(opt_in)))
    assert not Target.objects.exists()
    assert not INCLUDE.exists()


def test_an_owner_without_it_keeps_what_staff_set_and_changes_the_rest(api, owner, server_host):
    target = Target.objects.create(
        name="db", host="127.0.0.1", port=3306, user="bench", created_by=owner,
        restart_mode="service", restart_config=SERVICE, server_host=server_host,
    )  # fmt: skip
    url = f"/api/v1/targets/{target.pk}"
    for change in (
        {"restart_mode": ""},
        {"restart_config": {**SERVICE, "values": {"server": "other"}}},
        {"server_host": None},
    ):
        refused(api.patch(url, json=change), next(iter(change)))
    # The same values sent back (a PUT of what it read) and other fields: no permission needed.
    read = api.get(url).json()
    kept = {k: read[k] for k in ("restart_mode", "restart_config", "server_host")}
    answer = api.patch(url, json={"database": "other", **kept})
    assert answer.status_code == 200, answer.text
    target.refresh_from_db()
    assert (target.database, target.restart_mode, target.restart_config) == (
        "other", "service", SERVICE,
    )  # fmt: skip
    assert target.server_host == server_host


def test_a_user_granted_it_through_a_group_and_staff_may(live_server, restarter, admin_user):
    for user, name in ((restarter, "by-group"), (admin_user, "by-staff")):
        answer = api_of(live_server, user).post(
            "/api/v1/targets",
            json={**TARGET, "name": name, "restart_mode": "service", "restart_config": SERVICE},
        )
        assert answer.status_code == 201, answer.text
        assert answer.json()["restart_config"] == SERVICE
    assert Target.objects.filter(restart_mode="service").count() == 2


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ({**SERVICE, "command": ["/bin/sh", "-c", "touch {marker}"]}, "never an argv"),
        ({**SERVICE, "command": "sh"}, "'sh' is not one of the restart commands"),
        ({**SERVICE, "values": {"server": "../../bin"}}, "values.server: one word"),
        ({**SERVICE, "values": {"server": "a b"}}, "values.server: one word"),
        ({**SERVICE, "values": {"server": "x/y"}}, "values.server: one word"),
        ({**SERVICE, "include": "/etc/mysql/conf.d/99-benchdash.cnf"}, "outside the include"),
        ({**SERVICE, "include": f"{INCLUDE.parent}/../../etc/x.cnf"}, "without '..'"),
    ],
    ids=["argv", "unknown", "dots", "space", "slash", "outside", "climbs"],
)
def test_a_restart_config_the_operator_did_not_allow_is_a_400_naming_it(
    live_server, restarter, tmp_path, config, why
):
    marker = tmp_path / "ran"
    if isinstance(config["command"], list):
        config = {
            **config,
            "command": [w.replace("{marker}", str(marker)) for w in config["command"]],
        }
    them: Api = api_of(live_server, restarter)
    answer = them.post("/api/v1/targets", json={**TARGET, "restart_mode": "service",
                                                 "restart_config": config})  # fmt: skip
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "restart_config"
    assert why in answer.json()["message"]
    assert not Target.objects.exists()
    assert not marker.exists() and not INCLUDE.exists()
    assert not Path("/etc/mysql/conf.d/99-benchdash.cnf").exists()


def test_the_schema_says_who_may_set_the_restart_fields(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    fields = schema["components"]["schemas"]["Target"]["properties"]
    for name in ("restart_mode", "restart_config", "server_host"):
        assert "runs.manage_restarts" in fields[name]["description"], name


def test_an_operator_names_as_server_host_only_a_load_host_they_may_use(
    live_server, restarter, server_host, admin_user
):
    """The server host's key logs in there: holding runs.manage_restarts is not leave to
    use a colleague's SSH host (its owner, staff or runs.change_loadhost may)."""
    them: Api = api_of(live_server, restarter)
    answer = them.post("/api/v1/targets", json={**TARGET, "server_host": server_host.pk})
    assert answer.status_code == 403, answer.text
    assert answer.json()["message"].startswith("server_host: you may not use the load host")
    assert not Target.objects.exists()

    staff = api_of(live_server, admin_user).post(
        "/api/v1/targets", json={**TARGET, "server_host": server_host.pk}
    )
    assert staff.status_code == 201, staff.text
    assert staff.json()["server_host"] == server_host.pk
