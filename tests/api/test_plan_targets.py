"""A plan's targets axis through the API: kept in the user's order, each target checked as
the plan's own is, the settings checked on each one's engine, the field named."""

from __future__ import annotations

import pytest

from runs.models import Plan, PlanTarget, Target


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


def make_target(name: str, owner, engine: str = "mariadb") -> Target:
    return Target.objects.create(
        name=name, engine=engine, host="127.0.0.1", port=1, database="sbtest", user="bench",
        created_by=owner,
    )  # fmt: skip


def test_a_plan_keeps_its_targets_in_the_users_order(api, plan_fields, owner):
    second, third = make_target("db-2", owner), make_target("db-3", owner)

    created = api.post("/api/v1/plans", json={**plan_fields, "more_targets": [third.pk, second.pk]})

    assert created.status_code == 201, created.text
    plan = created.json()
    assert plan["more_targets"] == [third.pk, second.pk]
    links = PlanTarget.objects.filter(plan_id=plan["id"]).order_by("position")
    assert [(link.target_id, link.position) for link in links] == [(third.pk, 1), (second.pk, 2)]
    assert api.get(f"/api/v1/plans/{plan['id']}").json()["more_targets"] == [third.pk, second.pk]

    swapped = api.patch(f"/api/v1/plans/{plan['id']}", json={"more_targets": [second.pk, third.pk]})
    assert swapped.status_code == 200, swapped.text
    assert swapped.json()["more_targets"] == [second.pk, third.pk]
    kept = api.patch(f"/api/v1/plans/{plan['id']}", json={"threads": [4]})
    assert kept.json()["more_targets"] == [second.pk, third.pk]  # left out: kept
    assert api.patch(f"/api/v1/plans/{plan['id']}", json={"more_targets": []}).status_code == 200
    assert not PlanTarget.objects.filter(plan_id=plan["id"]).exists()


def test_an_other_users_target_is_refused_by_name(api, plan_fields, outsider):
    theirs = make_target("not-mine", outsider)

    answer = api.post("/api/v1/plans", json={**plan_fields, "more_targets": [theirs.pk]})

    assert answer.status_code == 403, answer.text
    assert answer.json()["message"].startswith("more_targets: you may not")
    assert "not-mine" in answer.json()["message"]
    assert not Plan.objects.exists()


def test_a_setting_another_engine_lacks_is_refused_naming_the_server(api, plan_fields, owner):
    postgres = make_target("pg-15", owner, engine="postgresql")

    answer = api.post("/api/v1/plans", json={**plan_fields, "more_targets": [postgres.pk]})

    assert answer.status_code == 400, answer.text
    assert "innodb_flush_log_at_trx_commit" in answer.json()["message"]
    assert "pg-15" in answer.json()["message"]
    assert not Plan.objects.exists()


def test_engines_may_differ_when_every_setting_exists_on_each(api, plan_fields, owner):
    postgres = make_target("pg-15", owner, engine="postgresql")
    fields = {**plan_fields, "server_settings": {}, "more_targets": [postgres.pk]}

    answer = api.post("/api/v1/plans", json=fields)

    assert answer.status_code == 201, answer.text
    assert answer.json()["more_targets"] == [postgres.pk]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"more_targets": "FIRST"}, "listed twice"),
        (
            {"test": "cpu", "target": None, "server_settings": {}, "options": {"time": 2}},
            "targets axis needs a database",
        ),
    ],
)
def test_a_targets_axis_that_cannot_work_is_refused(api, plan_fields, owner, change, words):
    other = make_target("db-2", owner)
    more = [plan_fields["target"]] if change.get("more_targets") == "FIRST" else [other.pk]

    answer = api.post("/api/v1/plans", json={**plan_fields, **change, "more_targets": more})

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "more_targets", answer.json()
    assert words in answer.json()["message"]
    assert not Plan.objects.exists()
