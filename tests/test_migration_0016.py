"""Migration 0016 (issue 51): one word for the servers feature, renames only. A plan's
targets compared (PlanTarget → PlanServer, Plan.more_targets → Plan.server_targets) and
its server axes (Plan.server_axes → Plan.servers), a batch's record of what to put back
(Batch.servers → Batch.put_back) and its frozen parameters' key (server_axes → servers)
survive it, on real rows (the test database, taken back to 0015 and forward again)."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from runs.frozen import FrozenPlan
from runs.models import Batch, Plan, PlanServer
from tests.migrating import migrated_from

migration = importlib.import_module("runs.migrations.0016_servers_one_word")
AXES = {"installs": ["10.11", "11.4"], "configs": [{"label": "b1e1", "text": "x = 1"}],
        "after_restart": "cold", "warm_s": 5}  # fmt: skip
PUT_BACK = {"7": {"original": {"install": "10.11"}, "running": None}}


def _old_rows(old) -> dict[str, int]:
    Target, LoadHost = old.get_model("runs", "Target"), old.get_model("runs", "LoadHost")
    Plan, PlanTarget = old.get_model("runs", "Plan"), old.get_model("runs", "PlanTarget")
    Batch = old.get_model("runs", "Batch")
    first, second, third = (
        Target.objects.create(name=n, host="127.0.0.1", port=3306, user="bench")
        for n in ("db-1", "db-2", "db-3")
    )
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name="old", target=first, load_host=local, threads=[1], server_axes=AXES
    )
    PlanTarget.objects.create(plan=plan, target=third, position=1)
    PlanTarget.objects.create(plan=plan, target=second, position=2)
    params = {"test": "oltp_insert", "server_axes": AXES, "threads": [1]}
    batch = Batch.objects.create(plan=plan, target=first, load_host=local, params=params,
                                 seed=1, launched_by="api", servers=PUT_BACK)  # fmt: skip
    bare = Batch.objects.create(plan=plan, target=first, load_host=local,
                                params={"test": "cpu"}, seed=2, launched_by="api")  # fmt: skip
    return {"plan": plan.pk, "batch": batch.pk, "bare": bare.pk, "second": second.pk,
            "third": third.pk}  # fmt: skip


def test_the_servers_feature_keeps_its_rows_under_its_new_names(db):
    with migrated_from("0015_stored_credentials_hidden", "0016_servers_one_word") as old:
        made = _old_rows(old)

    plan = Plan.objects.get(pk=made["plan"])
    assert plan.servers == AXES
    assert {t.pk for t in plan.server_targets.all()} == {made["third"], made["second"]}
    links = PlanServer.objects.filter(plan=plan).order_by("position")
    assert [(link.target_id, link.position) for link in links] == [
        (made["third"], 1),
        (made["second"], 2),
    ]
    assert [link.target_id for link in plan.plan_servers.all()] == [made["third"], made["second"]]
    batch = Batch.objects.get(pk=made["batch"])
    assert batch.put_back == PUT_BACK
    assert batch.params == {"test": "oltp_insert", "servers": AXES, "threads": [1]}
    assert FrozenPlan.from_params(batch.params).servers == AXES
    bare = Batch.objects.get(pk=made["bare"])
    assert bare.params == {"test": "cpu"}  # no key to rename: left as it was
    assert FrozenPlan.from_params(bare.params).servers == {}


def test_the_constraints_hold_under_their_new_names(db):
    with migrated_from("0015_stored_credentials_hidden", "0016_servers_one_word") as old:
        made = _old_rows(old)

    names = {c.name for c in PlanServer._meta.constraints}
    assert names == {"plan_server_once", "plan_server_position"}
    with pytest.raises(Exception, match="plan_server_once"):
        PlanServer.objects.create(plan_id=made["plan"], target_id=made["third"], position=3)


def test_the_params_key_is_renamed_once_and_back(db):
    with migrated_from("0015_stored_credentials_hidden", "0016_servers_one_word") as old:
        made = _old_rows(old)

    assert migration.params_servers(apps) == 0  # a second pass finds nothing to do
    assert migration.params_server_axes(apps) == 1  # backwards: the old key again
    assert Batch.objects.get(pk=made["batch"]).params["server_axes"] == AXES
    assert migration.params_servers(apps) == 1
