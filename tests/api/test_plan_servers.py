"""A plan's servers axis through the API: one object, `servers` — its targets kept in the
user's order, each checked as the plan's own is, the settings checked on each one's engine;
installs and configs read back as written; the field named. And a key the plan does not
take is refused, naming it, never dropped in silence."""

from __future__ import annotations

import pytest

from runs.models import Plan, PlanServer, Target

MANAGED = {"installs": [{"label": "10.11", "basedir": "/usr", "datadir": "/srv/mariadb"},
                        {"label": "11.4", "basedir": "/opt/mariadb-11.4",
                         "datadir": "/srv/mariadb-11.4"}],
           "timeout_s": 60}  # fmt: skip


@pytest.fixture
def plan_fields(offline_target, local_host):
    return {
        "name": "servers",
        "target": offline_target.pk,
        "load_host": local_host.pk,
        "test": "oltp_insert",
        "options": {"time": 2, "tables": 1, "table-size": 100},
        "threads": [1, 2],
        "server_settings": {"innodb_flush_log_at_trx_commit": ["1", "2"]},
    }


def make_target(name: str, owner, engine: str = "mariadb", **more) -> Target:
    return Target.objects.create(
        name=name, engine=engine, host="127.0.0.1", port=1, database="sbtest", user="bench",
        created_by=owner, **more,
    )  # fmt: skip


def test_a_plan_keeps_its_targets_in_the_users_order(api, plan_fields, owner):
    second, third = make_target("db-2", owner), make_target("db-3", owner)

    created = api.post(
        "/api/v1/plans", json={**plan_fields, "servers": {"targets": [third.pk, second.pk]}}
    )

    assert created.status_code == 201, created.text
    plan = created.json()
    assert plan["servers"] == {"targets": [third.pk, second.pk]}
    links = PlanServer.objects.filter(plan_id=plan["id"]).order_by("position")
    assert [(link.target_id, link.position) for link in links] == [(third.pk, 1), (second.pk, 2)]
    read = api.get(f"/api/v1/plans/{plan['id']}").json()
    assert read["servers"] == {"targets": [third.pk, second.pk]}

    swapped = api.patch(
        f"/api/v1/plans/{plan['id']}", json={"servers": {"targets": [second.pk, third.pk]}}
    )
    assert swapped.status_code == 200, swapped.text
    assert swapped.json()["servers"]["targets"] == [second.pk, third.pk]
    kept = api.patch(f"/api/v1/plans/{plan['id']}", json={"threads": [4]})
    assert kept.json()["servers"]["targets"] == [second.pk, third.pk]  # left out: kept
    assert api.patch(f"/api/v1/plans/{plan['id']}", json={"servers": {}}).status_code == 200
    assert not PlanServer.objects.filter(plan_id=plan["id"]).exists()  # given: replaced whole


def test_installs_and_configs_read_back_as_written_and_a_patch_replaces_them(
    api, plan_fields, owner
):
    restarting = make_target("db-r", owner, restart_mode="managed", restart_config=MANAGED)
    other = make_target("db-r2", owner, restart_mode="managed", restart_config=MANAGED)
    servers = {
        "targets": [other.pk],
        "installs": ["10.11", "11.4"],
        "configs": [{"label": "b1e1", "text": "innodb_flush_log_at_trx_commit = 1\n"},
                    {"label": "b0e0", "text": "  innodb_flush_log_at_trx_commit = 0"}],
        "after_restart": "cold",
        "warm_s": 5,
    }  # fmt: skip
    fields = {**plan_fields, "target": restarting.pk, "server_settings": {}}

    created = api.post("/api/v1/plans", json={**fields, "servers": servers})

    assert created.status_code == 201, created.text
    plan_id = created.json()["id"]
    assert created.json()["servers"] == servers
    assert api.get(f"/api/v1/plans/{plan_id}").json()["servers"] == servers
    stored = Plan.objects.get(pk=plan_id)
    assert stored.servers == {k: v for k, v in servers.items() if k != "targets"}
    assert [t.pk for t in stored.server_targets.all()] == [other.pk]

    patched = api.patch(f"/api/v1/plans/{plan_id}", json={"servers": {"installs": ["11.4"]}})
    assert patched.status_code == 200, patched.text
    assert patched.json()["servers"] == {"targets": [], "installs": ["11.4"]}
    assert api.patch(f"/api/v1/plans/{plan_id}", json={"repeats": 2}).json()["servers"] == {
        "targets": [],
        "installs": ["11.4"],
    }


@pytest.mark.parametrize(
    ("servers", "field", "words"),
    [
        ({"installs": ["10.11"]}, "servers", "never restarts"),
        ({"after_restart": "tepid"}, "servers.after_restart", "is not a valid choice"),
        ({"warm_s": "10"}, "servers.warm_s", "must be a whole number"),
        ({"configs": [{"label": "x", "text": 1}]}, "servers.configs.0.text", "must be a string"),
        ({"installs": ["10.11"], "flavour": "x"}, "servers.flavour", "unknown field"),
    ],
)
def test_a_servers_axis_refused_names_its_field(api, plan_fields, servers, field, words):
    answer = api.post("/api/v1/plans", json={**plan_fields, "servers": servers})

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field, answer.json()
    assert words in answer.json()["message"]
    assert not Plan.objects.exists()


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("more_targets", "unknown field: more_targets is now servers.targets"),
        ("server_axes", "unknown field: server_axes is now servers"),
        ("created_by", "read-only field: created_by is set by benchdash"),
        ("colour", "unknown field: colour is not one of this body's fields"),
    ],
)
def test_a_key_the_plan_does_not_take_is_refused_by_name(api, plan_fields, owner, key, words):
    answer = api.post("/api/v1/plans", json={**plan_fields, key: []})

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == key and words in answer.json()["message"], answer.json()
    assert not Plan.objects.exists()
    plan = api.post("/api/v1/plans", json=plan_fields).json()
    for method in (api.patch, api.put):
        refused = method(f"/api/v1/plans/{plan['id']}", json={**plan_fields, key: []})
        assert refused.status_code == 400 and refused.json()["field"] == key, refused.text


def test_an_other_users_target_is_refused_by_name(api, plan_fields, outsider):
    theirs = make_target("not-mine", outsider)

    answer = api.post("/api/v1/plans", json={**plan_fields, "servers": {"targets": [theirs.pk]}})

    assert answer.status_code == 403, answer.text
    assert answer.json()["message"].startswith("servers.targets: you may not")
    assert "not-mine" in answer.json()["message"]
    assert not Plan.objects.exists()


def test_a_setting_another_engine_lacks_is_refused_naming_the_server(api, plan_fields, owner):
    postgres = make_target("pg-15", owner, engine="postgresql")

    answer = api.post("/api/v1/plans", json={**plan_fields, "servers": {"targets": [postgres.pk]}})

    assert answer.status_code == 400, answer.text
    assert "innodb_flush_log_at_trx_commit" in answer.json()["message"]
    assert "pg-15" in answer.json()["message"]
    assert not Plan.objects.exists()


def test_engines_may_differ_when_every_setting_exists_on_each(api, plan_fields, owner):
    postgres = make_target("pg-15", owner, engine="postgresql")
    fields = {**plan_fields, "server_settings": {}, "servers": {"targets": [postgres.pk]}}

    answer = api.post("/api/v1/plans", json=fields)

    assert answer.status_code == 201, answer.text
    assert answer.json()["servers"] == {"targets": [postgres.pk]}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"servers": "FIRST"}, "listed twice"),
        (
            {"test": "cpu", "target": None, "server_settings": {}, "options": {"time": 2}},
            "several targets need a database test",
        ),
    ],
)
def test_a_servers_axis_that_cannot_work_is_refused(api, plan_fields, owner, change, words):
    other, change = make_target("db-2", owner), dict(change)
    more = [plan_fields["target"]] if change.pop("servers", None) == "FIRST" else [other.pk]

    answer = api.post("/api/v1/plans", json={**plan_fields, **change, "servers": {"targets": more}})

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "servers.targets", answer.json()
    assert words in answer.json()["message"]
    assert not Plan.objects.exists()
