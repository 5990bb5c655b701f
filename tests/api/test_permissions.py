"""Who may do what, through the API: the owner, a teammate (a group granted the
permissions) and an outsider, each with a token of their own. A refusal is a 403 with
`{field, message}` saying who may; reads are for everyone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission

from runs.models import Batch, LoadHost, Plan, Status, Target
from runs.services import tokens
from tests.api.conftest import Api

TEAM_PERMISSIONS = ["change_target", "change_loadhost", "change_plan", "delete_plan"]


@pytest.fixture
def teammate(transactional_db: None, django_user_model: Any) -> Any:
    user = django_user_model.objects.create_user("teammate", password="teammate-pass-1")
    team = Group.objects.create(name="dba")
    team.permissions.set(Permission.objects.filter(codename__in=TEAM_PERMISSIONS))
    user.groups.add(team)
    return user


def api_of(live_server: Any, user: Any) -> Api:
    return Api(live_server.url, tokens.token_create(user=user, name="t", expires_in=None)[1])


@pytest.fixture
def owned(api: Api, local_host: LoadHost) -> dict[str, int]:
    """A target, an SSH load host and a plan, made by the owner through the API."""
    target = api.post(
        "/api/v1/targets",
        json={"name": "db", "host": "127.0.0.1", "port": 1, "user": "bench", "password": "pw"},
    )
    host = api.post(
        "/api/v1/load-hosts",
        json={"name": "lg", "kind": "ssh", "address": "10.0.0.9", "user": "bench"},
    )
    assert target.status_code == host.status_code == 201, (target.text, host.text)
    plan = api.post(
        "/api/v1/plans",
        json={"name": "p", "target": target.json()["id"], "load_host": local_host.pk,
              "test": "oltp_read_only", "threads": [1], "options": {"time": 5}},
    )  # fmt: skip
    assert plan.status_code == 201, plan.text
    return {"target": target.json()["id"], "host": host.json()["id"], "plan": plan.json()["id"]}


def refused(answer: Any) -> str:
    assert answer.status_code == 403, answer.text
    body = answer.json()
    assert set(body) == {"field", "message"}
    return str(body["message"])


def test_created_rows_belong_to_their_creator(owned, owner):
    assert Target.objects.get(pk=owned["target"]).created_by == owner
    assert LoadHost.objects.get(pk=owned["host"]).created_by == owner
    assert Plan.objects.get(pk=owned["plan"]).created_by == owner


def test_an_outsider_reads_but_changes_nothing(live_server, owned, outsider, local_host):
    them = api_of(live_server, outsider)
    t, h, p = owned["target"], owned["host"], owned["plan"]
    for path in (f"/api/v1/targets/{t}", f"/api/v1/load-hosts/{h}", f"/api/v1/plans/{p}"):
        assert them.get(path).status_code == 200

    message = refused(them.patch(f"/api/v1/targets/{t}", json={"host": "evil.example"}))
    assert "only the owner of the target db (owned by owner)" in message
    assert "runs.change_target" in message
    refused(them.delete(f"/api/v1/targets/{t}"))
    refused(them.patch(f"/api/v1/load-hosts/{h}", json={"address": "evil.example"}))
    refused(them.post(f"/api/v1/load-hosts/{h}/scan"))
    refused(them.post(f"/api/v1/load-hosts/{h}/confirm-host-key", json={"fingerprint": "x"}))
    refused(them.delete(f"/api/v1/load-hosts/{h}"))
    refused(them.patch(f"/api/v1/plans/{p}", json={"load_host": h}))
    refused(them.delete(f"/api/v1/plans/{p}"))
    refused(them.put(f"/api/v1/plans/{p}/schedule", json={"interval_s": 60}))
    assert "may launch it" in refused(them.post(f"/api/v1/plans/{p}/launch"))
    refused(them.post(f"/api/v1/plans/{p}/preflight"))
    # Their own plan on the owner's target: the password would go where they say.
    own = {"name": "mine", "target": t, "load_host": local_host.pk, "threads": [1]}
    assert "with the target db" in refused(them.post("/api/v1/plans", json=own))

    assert Target.objects.get(pk=t).host == "127.0.0.1"
    assert LoadHost.objects.get(pk=h).address == "10.0.0.9"
    assert not Batch.objects.exists() and not Plan.objects.filter(name="mine").exists()


def test_a_teammate_may_change_and_launch_but_not_delete_without_the_permission(
    live_server, owned, teammate, outsider
):
    mate = api_of(live_server, teammate)
    t, p = owned["target"], owned["plan"]

    assert mate.patch(f"/api/v1/targets/{t}", json={"database": "other"}).status_code == 200
    assert "runs.delete_target" in refused(mate.delete(f"/api/v1/targets/{t}"))
    launched = mate.post(f"/api/v1/plans/{p}/launch")
    assert launched.status_code == 201, launched.text
    batch = launched.json()["id"]

    # Cancel is for who launched it, the plan's owner, runs.change_batch and staff.
    assert "may cancel it" in refused(
        api_of(live_server, outsider).post(f"/api/v1/batches/{batch}/cancel")
    )
    assert mate.post(f"/api/v1/batches/{batch}/cancel").json()["status"] == Status.CANCELLED


def test_staff_may_do_everything(live_server, owned, django_user_model):
    boss = django_user_model.objects.create_user("boss", password="boss-pass-1", is_staff=True)
    staff = api_of(live_server, boss)
    assert staff.patch(f"/api/v1/targets/{owned['target']}", json={"port": 2}).status_code == 200
    assert staff.delete(f"/api/v1/plans/{owned['plan']}").status_code == 204
    assert staff.delete(f"/api/v1/load-hosts/{owned['host']}").status_code == 204


def test_an_outsider_may_not_attach_imported_results_to_anothers_target(
    live_server, owned, outsider, teammate
):
    log = (Path(__file__).parent.parent / "fixtures" / "sysbench" / "cpu.txt").read_bytes()
    them = api_of(live_server, outsider)

    answer = them.post(
        "/api/v1/imports", files={"log": ("cpu.txt", log)}, data={"target": owned["target"]}
    )

    message = refused(answer)
    assert "you may not attach results to the target db" in message
    assert not Batch.objects.exists()
    # Without a target, or with one of theirs, the import is theirs to make.
    assert them.post("/api/v1/imports", files={"log": ("cpu.txt", log)}).status_code == 201
    team = api_of(live_server, teammate)
    answer = team.post(
        "/api/v1/imports", files={"log": ("cpu.txt", log)}, data={"target": owned["target"]}
    )
    assert answer.status_code == 201, answer.text
