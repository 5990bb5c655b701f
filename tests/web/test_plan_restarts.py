"""The plan editor counts the server restarts a plan makes and their time, on a target
that opted in to restarts (on each target of a servers axis); a target that did not shows
none, and one of a servers axis that did not is refused by name."""

from __future__ import annotations

import json

from runs.models import Target
from runs.services.restarts import RESTART_SECONDS
from tests.web.test_setup_pages import plan_post

MANAGED = {
    "installs": [{"label": "10.11", "basedir": "/usr", "datadir": "/srv/mariadb"}],
    "timeout_s": 60,
}


def test_the_plan_check_counts_restarts_and_their_time(client_in, stored_target):
    before = client_in.post("/plans/check", plan_post(stored_target)).json()["estimate"]
    assert before["restarts"] == 0 and before["restart_text"] == ""

    stored_target.restart_mode, stored_target.restart_config = "managed", MANAGED
    stored_target.save()
    fields = plan_post(
        stored_target,
        setting_name_0="innodb_flush_method",
        setting_values_0="fsync,O_DIRECT",
        repeats="2",
    )
    answer = client_in.post("/plans/check", fields).json()
    assert answer["ok"], answer
    estimate = answer["estimate"]
    # Two values, interleaved rounds: the values take turns in each round, restarts where
    # the value changes (matrix.restart_points) and the original put back at the end.
    assert 2 <= estimate["restarts"] - 1 <= 4, estimate
    each = RESTART_SECONDS["mariadb"]
    warm = 10 * (estimate["restarts"] - 1)  # the default warm-up after each restart
    assert estimate["restart_s"] == round(estimate["restarts"] * each + warm)
    assert estimate["total_s"] >= estimate["sysbench_s"] + estimate["restart_s"]
    assert estimate["restart_text"].endswith(("s", "min"))
    assert estimate["restart_each_s"] == each
    assert estimate["restart_source"] == "a small instance of the engine"


def test_a_target_that_restarted_before_is_estimated_with_its_own_restart_times(
    client_in, stored_target, make_batch
):
    stored_target.restart_mode, stored_target.restart_config = "managed", MANAGED
    stored_target.save()
    logged = [
        {"kind": "restart", "seconds": 6.0, "ok": True},
        {"kind": "restart", "seconds": 60.0, "ok": False},  # a failed one says nothing
        {"kind": "prepare", "seconds": 30.0, "ok": True},
        {"kind": "restart", "seconds": 8.0, "ok": True},
        {"kind": "restore", "seconds": 9.0, "ok": True},
    ]
    make_batch(target=stored_target, put_back={str(stored_target.pk): {}}, stages=logged)
    fields = plan_post(
        stored_target, setting_name_0="innodb_flush_method", setting_values_0="fsync,O_DIRECT"
    )
    estimate = client_in.post("/plans/check", fields).json()["estimate"]
    assert estimate["restart_each_s"] == 8.0  # the median of 6, 8 and 9
    assert estimate["restart_source"] == "this target's last restarts"
    warm = 10 * (estimate["restarts"] - 1)
    assert estimate["restart_s"] == round(estimate["restarts"] * 8.0 + warm)


def test_a_plan_over_two_targets_counts_each_ones_restarts_and_put_back(
    client_in, stored_target, user
):
    stored_target.restart_mode, stored_target.restart_config = "managed", MANAGED
    stored_target.save()
    second = Target.objects.create(
        name="db-2", engine="mariadb", host="127.0.0.1", port=3998, database="sbtest",
        user="bench", password="s3cret-target-pw", created_by=user,
        restart_mode="managed", restart_config=MANAGED,
    )  # fmt: skip
    fields = plan_post(
        stored_target,
        setting_name_0="innodb_flush_method",
        setting_values_0="fsync,O_DIRECT",
        server_targets=[str(second.pk)],
        repeats="1",
    )
    answer = client_in.post("/plans/check", fields).json()
    assert answer["ok"], answer
    # One round: each target restarts once for each of the 2 values, and is put back once
    # at the end.
    assert answer["estimate"]["restarts"] == 2 * 2 + 2, answer["estimate"]

    second.restart_mode, second.restart_config = "", {}
    second.save()
    refused = client_in.post("/plans/check", fields).json()
    assert not refused["ok"] and "db-2 never restarts" in json.dumps(refused), refused
