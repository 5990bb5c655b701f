"""The plan editor's servers fieldset on the server's side: the estimate of a configs
axis is the API's check of the plan as it will run (cells, runs, restarts, warm-ups), and a
refusal names the editor's field (issue 47: "1 cells, 3 runs" for 9 runs and 9 restarts)."""

from __future__ import annotations

from runs.models import Plan
from runs.services.plans import plan_check
from runs.sysbench.matrix import restart_points
from tests.web.test_plan_editor_round_trip import MANAGED
from tests.web.test_setup_pages import plan_post

CONFIGS = {
    "config_label_0": "b1e1", "config_text_0": "innodb_flush_log_at_trx_commit = 1\r\n",
    "config_label_1": "b0e1", "config_text_1": "innodb_flush_log_at_trx_commit = 0",
    "config_label_3": "b0e0", "config_text_3": "sync_binlog = 0",  # a row removed between
}  # fmt: skip


def opted_in(target):
    target.restart_mode, target.restart_config = "managed", MANAGED
    target.save()
    return target


def editor(target, **changes):
    fields = plan_post(target, threads="1", repeats="3", **{**CONFIGS, **changes})
    return {k: v for k, v in fields.items() if not k.startswith("set__")}


def test_the_estimate_of_a_configs_axis_counts_its_cells_runs_restarts_and_warm_ups(
    client_in, stored_target
):
    answer = client_in.post("/plans/check", editor(opted_in(stored_target), seed="3")).json()

    assert answer["ok"], answer
    shown = answer["estimate"]
    assert (shown["cells"], shown["runs"]) == (3, 9)
    assert shown["restarts_exact"] and shown["warm_s"] == 10
    # The API's own check of the same plan, with the same seed.
    plan = Plan(target=stored_target, load_host_id=int(editor(stored_target)["load_host"]),
                test="oltp_read_only", threads=[1], repeats=3, seed=3,
                options={"time": 30, "tables": 1, "table-size": 1000},
                servers={"configs": [{"label": c, "text": "sync_binlog = 0"}
                                     for c in ("b1e1", "b0e1", "b0e0")]})  # fmt: skip
    cells = plan_check(plan=plan, seed=3, contact_server=False).cells
    points = len(restart_points(cells))
    assert shown["warmups"] == points and shown["restarts"] == points + 1  # and the put-back


def test_the_estimate_without_a_seed_says_its_restarts_are_about(client_in, stored_target):
    shown = client_in.post("/plans/check", editor(opted_in(stored_target))).json()["estimate"]
    assert shown["restarts"] and not shown["restarts_exact"]
    cold = editor(stored_target, after_restart="cold")
    assert client_in.post("/plans/check", cold).json()["estimate"]["warmups"] == 0


def test_a_saved_configs_axis_keeps_its_rows_in_order_and_its_lines(client_in, stored_target):
    posted = editor(opted_in(stored_target), installs="10.11", warm_s="20")
    assert client_in.post("/plans/new", posted).status_code == 302

    plan = Plan.objects.get(name="flush sweep")
    assert plan.servers == {
        "installs": ["10.11"],
        "configs": [{"label": "b1e1", "text": "innodb_flush_log_at_trx_commit = 1\n"},
                    {"label": "b0e1", "text": "innodb_flush_log_at_trx_commit = 0"},
                    {"label": "b0e0", "text": "sync_binlog = 0"}],
        "warm_s": 20,
    }  # fmt: skip


def test_a_servers_refusal_names_the_editors_field(client_in, stored_target):
    unlabelled = editor(stored_target, config_label_1="")
    error = client_in.post("/plans/check", unlabelled).json()["errors"][0]
    assert error["field"] == "servers.configs" and "give it a label" in error["message"]

    never = client_in.post("/plans/check", editor(stored_target)).json()
    assert "db-1 never restarts" in str(never["errors"]), never
    opted_in(stored_target)
    unknown = client_in.post("/plans/check", editor(stored_target, installs="12.0")).json()
    assert unknown["errors"][0]["field"] == "installs", unknown
    assert "'12.0' is not one of 10.11, 11.4" in unknown["errors"][0]["message"]
