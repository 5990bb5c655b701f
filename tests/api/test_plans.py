"""Plans through the API: every check of the services, errors naming the field, schedules."""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from django_celery_beat.models import PeriodicTask

from runs.models import Batch, LoadHost, Plan


@pytest.fixture
def plan_fields(offline_target, local_host):
    return {
        "name": "inserts",
        "target": offline_target.pk,
        "load_host": local_host.pk,
        "test": "oltp_insert",
        "options": {"time": 2, "tables": 1, "table-size": 100},
        "threads": [1, 2],
        "server_settings": {"innodb_flush_log_at_trx_commit": ["1", "2"]},
    }


def test_a_plan_is_created_read_updated_and_deleted(api, plan_fields, owner):
    created = api.post("/api/v1/plans", json=plan_fields)

    assert created.status_code == 201, created.text
    plan = created.json()
    assert plan["created_by"] == "owner"
    assert plan["schedule"] is None
    assert api.get("/api/v1/plans").json()["results"] == [plan]

    changed = api.patch(f"/api/v1/plans/{plan['id']}", json={"threads": [4]})
    assert changed.status_code == 200, changed.text
    assert Plan.objects.get(pk=plan["id"]).threads == [4]

    assert api.delete(f"/api/v1/plans/{plan['id']}").status_code == 204
    assert not Plan.objects.exists()


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"options": {"time": "soon"}}, "time", "not a whole number"),
        ({"options": {"tabels": 4}}, "tabels", "unknown option"),
        ({"test": "oltp_nonsense"}, "test", "oltp_nonsense"),
        ({"threads": []}, "threads", "at least 1"),
        ({"server_settings": {"datadir": ["/tmp"]}}, "server_settings", "allow-list"),
        ({"target": None}, "target", "database test"),
        ({"repeats": 0}, "repeats", "greater than or equal to 1"),
        ({"auto": {"threads": {"max": 0}}}, "auto.threads.max", "between 1 and"),
        ({"auto": {"rate": True}, "options": {"rate": 10}}, "rate", "leave it out"),
    ],
)
def test_a_bad_plan_is_refused_naming_the_field(api, plan_fields, change, field, words):
    answer = api.post("/api/v1/plans", json={**plan_fields, **change})

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field, answer.json()
    assert words in answer.json()["message"]
    assert not Plan.objects.exists()


def test_an_update_that_breaks_a_plan_is_refused_and_changes_nothing(api, plan_fields):
    plan = api.post("/api/v1/plans", json=plan_fields).json()

    answer = api.patch(f"/api/v1/plans/{plan['id']}", json={"options": {"time": -1}})

    assert answer.status_code == 400
    assert answer.json()["field"] == "time"
    assert Plan.objects.get(pk=plan["id"]).options == plan_fields["options"]


def test_errors_are_json_with_a_message(api, plan_fields, offline_target):
    missing = api.get("/api/v1/plans/999999")
    assert missing.status_code == 404
    assert missing.json() == {"field": None, "message": "No Plan matches the given query."}

    api.post("/api/v1/plans", json=plan_fields)
    in_use = api.delete(f"/api/v1/targets/{offline_target.pk}")
    assert in_use.status_code == 409
    assert "inserts" in in_use.json()["message"]

    several = api.post("/api/v1/targets", json={"port": "x"})
    assert several.status_code == 400
    fields = {e["field"] for e in several.json()["errors"]}
    assert {"name", "user", "port"} <= fields


def test_a_target_needs_a_host_or_a_socket(api):
    answer = api.post("/api/v1/targets", json={"name": "nowhere", "user": "bench"})

    assert answer.status_code == 400
    assert answer.json()["field"] == "host"


def test_a_schedule_is_set_changed_and_removed_at_run_time(api, plan_fields):
    plan = api.post("/api/v1/plans", json=plan_fields).json()
    url = f"/api/v1/plans/{plan['id']}/schedule"
    assert api.get(url).status_code == 404

    nightly = api.put(url, json={"cron": "30 2 * * 1-5", "timezone": "Europe/Paris"})
    assert nightly.status_code == 200, nightly.text
    assert nightly.json() | {"last_run_at": None} == {
        "kind": "cron",
        "cron": "30 2 * * 1-5",
        "interval_s": None,
        "clocked_at": None,
        "timezone": "Europe/Paris",
        "enabled": True,
        "last_run_at": None,
        "total_run_count": 0,
    }
    task = PeriodicTask.objects.get()
    assert (task.task, task.args) == ("runs.tasks.plan_launch_scheduled", f"[{plan['id']}]")
    assert api.get(f"/api/v1/plans/{plan['id']}").json()["schedule"]["cron"] == "30 2 * * 1-5"

    hourly = api.put(url, json={"interval_s": 3600, "enabled": False})
    assert hourly.json()["kind"] == "interval"
    assert hourly.json()["enabled"] is False
    once = api.put(url, json={"clocked_at": "2031-05-01T06:00:00", "timezone": "Asia/Tokyo"})
    assert once.json()["clocked_at"] == "2031-04-30T21:00:00Z"
    assert PeriodicTask.objects.get().one_off  # still the same task, now one-off

    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404
    assert not PeriodicTask.objects.exists()


@pytest.mark.parametrize(
    ("schedule", "field"),
    [
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "* * *"}, "cron"),
        ({"cron": "0 2 * * *", "interval_s": 60}, "interval_s"),
        ({}, "cron"),
        ({"cron": "0 2 * * *", "timezone": "Mars/Olympus"}, "timezone"),
        ({"interval_s": 0}, "interval_s"),
    ],
)
def test_a_bad_schedule_is_refused(api, plan_fields, schedule, field):
    plan = api.post("/api/v1/plans", json=plan_fields).json()

    answer = api.put(f"/api/v1/plans/{plan['id']}/schedule", json=schedule)

    assert answer.status_code == 400
    assert answer.json()["field"] == field, answer.json()
    assert not PeriodicTask.objects.exists()


def test_deleting_a_plan_deletes_its_schedule_and_a_plan_with_batches_stays(
    api, plan_fields, make_batch
):
    plan = api.post("/api/v1/plans", json=plan_fields).json()
    api.put(f"/api/v1/plans/{plan['id']}/schedule", json={"interval_s": 60})

    assert api.delete(f"/api/v1/plans/{plan['id']}").status_code == 204
    assert not PeriodicTask.objects.exists()

    kept = api.post("/api/v1/plans", json=plan_fields).json()
    make_batch(Plan.objects.get(pk=kept["id"]))
    assert api.delete(f"/api/v1/plans/{kept['id']}").status_code == 409
    assert Batch.objects.count() == 1


def test_a_plan_takes_auto_modes_and_stores_them_with_their_defaults(api, plan_fields):
    body = {**plan_fields, "threads": [1], "auto": {"repeats": True, "threads": {"max": 16}}}

    created = api.post("/api/v1/plans", json=body)

    assert created.status_code == 201, created.text
    assert created.json()["auto"] == {
        "repeats": {"target_pct": 2.0, "max": 5, "margin_pct": 2.0},
        "threads": {"max": 16, "slo_p95_ms": None, "rise_pct": 5.0},
    }


def test_a_plan_names_more_load_hosts_and_how_cells_split_between_them(
    api, plan_fields, owner, local_host
):
    far = [
        LoadHost.objects.create(
            name=f"far-{i}", kind="ssh", address=f"10.0.0.{i}", user="b", created_by=owner
        )
        for i in (1, 2)
    ]
    fields = {**plan_fields, "load_host": far[0].pk, "threads": [2, 4]}
    created = api.post(
        "/api/v1/plans", json={**fields, "extra_load_hosts": [far[1].pk], "load_split": "each"}
    )
    assert created.status_code == 201, created.text
    plan = created.json()
    assert (plan["extra_load_hosts"], plan["load_split"]) == ([far[1].pk], "each")
    assert list(Plan.objects.get(pk=plan["id"]).extra_load_hosts.all()) == [far[1]]

    # Left out of an update, they stay; given, they replace.
    assert api.patch(f"/api/v1/plans/{plan['id']}", json={"threads": [4]}).status_code == 200
    assert api.get(f"/api/v1/plans/{plan['id']}").json()["extra_load_hosts"] == [far[1].pk]
    refused = api.patch(f"/api/v1/plans/{plan['id']}", json={"extra_load_hosts": [local_host.pk]})
    assert refused.status_code == 400
    assert refused.json()["field"] == "extra_load_hosts"
    assert "local" in refused.json()["message"]


def _order(batch_id):
    return list(
        Batch.objects.get(pk=batch_id).runs.order_by("position").values_list("cell_key", flat=True)
    )


def test_the_seed_is_kept_on_the_plan_and_at_launch_and_the_report_replays_the_order(
    api, plan_fields, offline_target, local_host
):
    # issue 24: main dropped `seed` on POST /api/v1/plans and at launch
    fields = {**plan_fields, "threads": [1, 2, 4], "repeats": 3, "seed": 4242}
    plan = api.post("/api/v1/plans", json=fields).json()
    assert plan["seed"] == 4242

    first = api.post(f"/api/v1/plans/{plan['id']}/launch").json()
    again = api.post(f"/api/v1/plans/{plan['id']}/launch").json()
    assert Batch.objects.get(pk=first["id"]).seed == 4242
    assert _order(first["id"]) == _order(again["id"])  # same seed, same order

    other = api.post(f"/api/v1/plans/{plan['id']}/launch", json={"seed": 7}).json()
    assert Batch.objects.get(pk=other["id"]).seed == 7
    assert _order(other["id"]) != _order(first["id"])
    assert api.patch(f"/api/v1/plans/{plan['id']}", json={"seed": None}).json()["seed"] is None

    # the report's "run it again": its plan, POSTed back, replays the batch's order
    report = api.get(f"/api/v1/batches/{other['id']}/report").text
    replay = json.loads(html.unescape(report.split('id="report-replay">')[1].split("</pre>")[0]))
    assert replay["seed"] == 7
    replay.update(target=offline_target.pk, load_host=local_host.pk)
    replayed = api.post("/api/v1/plans", json=replay).json()
    relaunched = api.post(f"/api/v1/plans/{replayed['id']}/launch").json()
    assert _order(relaunched["id"]) == _order(other["id"])


def test_a_bad_seed_is_refused_naming_it(api, plan_fields):
    answer = api.post("/api/v1/plans", json={**plan_fields, "seed": -1})
    assert answer.status_code == 400 and answer.json()["field"] == "seed", answer.text


def test_a_ramp_holds_its_last_level_longer_and_the_hold_is_checked(api, plan_fields):
    # issue 24: stepped concurrency (threads in ramp order) with a longer last level
    fields = {**plan_fields, "threads": [1, 2, 4], "order_policy": "ramp", "repeats": 1,
              "auto": {"hold": {"last_level_s": 30}}}  # fmt: skip
    plan = api.post("/api/v1/plans", json=fields)
    assert plan.status_code == 201, plan.text
    assert plan.json()["auto"] == {"hold": {"last_level_s": 30}}
    batch = api.post(f"/api/v1/plans/{plan.json()['id']}/launch").json()
    runs = Batch.objects.get(pk=batch["id"]).runs.order_by("position")
    # each series (flush=1, flush=2) ramps 1, 2, 4 threads; the 4-thread level holds 30 s
    assert [(r.threads, r.options["time"]) for r in runs] == [(1, 2), (2, 2), (4, 30)] * 2
    last = runs.last()
    assert last is not None and (last.expected_duration_s or 0) >= 30
    assert Batch.objects.get(pk=batch["id"]).params["auto"] == {"hold": {"last_level_s": 30}}

    refused: list[tuple[dict[str, Any], str]] = [
        ({"order_policy": "interleaved"}, "set the order to ramp"),
        ({"threads": [4]}, "at least two thread counts"),
        ({"auto": {"hold": {"last_level_s": 0}}}, "between 1 and 86400"),
        (
            {"auto": {"hold": {"last_level_s": 30}, "threads": True}, "threads": [1]},
            "not of a search",
        ),
    ]
    for change, words in refused:
        answer = api.post("/api/v1/plans", json={**fields, **change, "name": "held badly"})
        assert answer.status_code == 400, (change, answer.text)
        assert answer.json()["field"].startswith("auto.hold"), answer.json()
        assert words in answer.json()["message"], answer.json()


def test_a_launch_says_whether_the_command_made_it_and_claims_nothing_else(api, plan_fields):
    # issue 56: the `benchdash` command's launches were recorded as the API's.
    plan = api.post("/api/v1/plans", json=plan_fields).json()
    launch = f"/api/v1/plans/{plan['id']}/launch"

    by_api = api.post(launch).json()
    by_cli = api.post(launch, json={"launched_by": "cli"}).json()
    claimed = api.post(launch, json={"launched_by": "schedule"})

    assert (by_api["launched_by"], by_cli["launched_by"]) == ("api", "cli")
    assert Batch.objects.get(pk=by_cli["id"]).launched_by == "cli"
    assert claimed.status_code == 400 and claimed.json()["field"] == "launched_by"
    assert Batch.objects.filter(plan_id=plan["id"]).count() == 2
