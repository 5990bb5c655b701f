"""Migration 0015 (issue 46): credentials stored before restarts' options held settings
only are hidden in the plans, the batches' frozen parameters and the runs' settings; the
names, the other settings and every other line of a snippet kept as they were. The
function the migration runs, on real rows (the test database)."""

from __future__ import annotations

import importlib
import logging

import pytest
from django.apps import apps

from runs.credentials import HIDDEN
from runs.models import Batch, LoadHost, Plan, Run, Target
from tests.stored import bare_batch

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
def stored(db) -> tuple[Plan, Batch, Run]:
    target = Target.objects.create(name="db", host="127.0.0.1", port=3306, user="bench")
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    axes = {"configs": [{"label": "sst", "text": SNIPPET}], "after_restart": "warm"}
    plan = Plan.objects.create(
        name="old", target=target, load_host=local, test="oltp_insert", threads=[1],
        server_settings=SETTINGS, server_axes=axes,
    )  # fmt: skip
    batch = bare_batch(plan, params={"test": "oltp_insert", "server_settings": SETTINGS,
                                     "server_axes": axes})  # fmt: skip
    run = Run.objects.create(
        batch=batch, position=0, round=0, cell_key="k", threads=1, config="sst",
        settings={"report_password": "hunter2", "sync_binlog": "1"},
        verified_settings={"report_password": "hunter2", "sync_binlog": "1"},
    )  # fmt: skip
    return plan, batch, run


def test_stored_credentials_are_hidden_and_everything_else_kept(stored, caplog):
    plan, batch, run = stored
    untouched = Plan.objects.create(
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


def test_a_second_pass_changes_nothing(stored):
    migration.credentials_hidden(apps)
    assert migration.credentials_hidden(apps) == {"plans": 0, "batches": 0, "runs": 0}
