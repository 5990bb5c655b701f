"""Migration 0015 (issue 46): credentials stored before restarts' options held settings
only are hidden in the plans, the batches' frozen parameters and the runs' settings; the
names, the other settings and every other line of a snippet kept as they were. The
function the migration runs, on real rows (the test database taken back to 0015, whose
models name the servers axis server_axes: tests/migrating.py)."""

from __future__ import annotations

import importlib
import logging

import pytest

from runs.credentials import HIDDEN
from tests.migrating import migrated_from

migration = importlib.import_module("runs.migrations.0015_stored_credentials_hidden")
SNIPPET = (
    "[mysqld]\n# the team's line\ninnodb_log_buffer_size = 32M\nwsrep_sst_auth = root:hunter2\n"
)
SNIPPET_HIDDEN = (
    f"[mysqld]\n# the team's line\ninnodb_log_buffer_size = 32M\nwsrep_sst_auth = {HIDDEN}\n"
)
SETTINGS = {"innodb_flush_log_at_trx_commit": ["1", "2"], "report_password": ["hunter2"]}
SETTINGS_HIDDEN = {"innodb_flush_log_at_trx_commit": ["1", "2"], "report_password": [HIDDEN]}


@pytest.fixture
def apps(db):
    """The models as they were at 0015 (migrated forward again after the test)."""
    with migrated_from("0015_stored_credentials_hidden", "0016_servers_one_word") as old:
        yield old


@pytest.fixture
def stored(apps):
    Target, LoadHost, Plan, Batch, Run = (
        apps.get_model("runs", name) for name in ("Target", "LoadHost", "Plan", "Batch", "Run")
    )
    target = Target.objects.create(name="db", host="127.0.0.1", port=3306, user="bench")
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    axes = {"configs": [{"label": "sst", "text": SNIPPET}], "after_restart": "warm"}
    plan = Plan.objects.create(
        name="old", target=target, load_host=local, test="oltp_insert", threads=[1],
        server_settings=SETTINGS, server_axes=axes,
    )  # fmt: skip
    params = {"test": "oltp_insert", "server_settings": SETTINGS, "server_axes": axes}
    batch = Batch.objects.create(plan=plan, target=target, load_host=local, params=params,
                                 seed=1, launched_by="api")  # fmt: skip
    run = Run.objects.create(
        batch=batch, position=0, round=0, cell_key="k", threads=1, config="sst",
        settings={"report_password": "hunter2", "sync_binlog": "1"},
        verified_settings={"report_password": "hunter2", "sync_binlog": "1"},
    )  # fmt: skip
    return plan, batch, run


def test_stored_credentials_are_hidden_and_everything_else_kept(apps, stored, caplog):
    plan, batch, run = stored
    untouched = apps.get_model("runs", "Plan").objects.create(
        name="clean", target=plan.target, load_host=plan.load_host, test="oltp_insert",
        threads=[1], server_settings={"sync_binlog": ["0", "1"]},
    )  # fmt: skip

    with caplog.at_level(logging.WARNING, logger="runs.migrations.credentials"):
        changed = migration.credentials_hidden(apps)

    assert changed == {"plans": 1, "batches": 1, "runs": 1}
    plan.refresh_from_db(), batch.refresh_from_db(), run.refresh_from_db()
    assert plan.server_settings == SETTINGS_HIDDEN
    assert plan.server_axes == {
        "configs": [{"label": "sst", "text": SNIPPET_HIDDEN}],
        "after_restart": "warm",
    }
    assert batch.params["server_settings"] == SETTINGS_HIDDEN
    assert batch.params["server_axes"]["configs"][0]["text"] == SNIPPET_HIDDEN
    assert batch.params["test"] == "oltp_insert"
    assert run.settings == run.verified_settings == {"report_password": HIDDEN, "sync_binlog": "1"}
    untouched.refresh_from_db()
    assert untouched.server_settings == {"sync_binlog": ["0", "1"]}
    assert "hunter2" not in caplog.text
    assert "plan old" in caplog.text and f"batch {batch.pk}" in caplog.text


def test_a_second_pass_changes_nothing(apps, stored):
    migration.credentials_hidden(apps)
    assert migration.credentials_hidden(apps) == {"plans": 0, "batches": 0, "runs": 0}
