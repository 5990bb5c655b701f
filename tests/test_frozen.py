"""A batch's frozen plan reads every shape `Batch.params` has been stored in, and writes
back the same dict."""

from __future__ import annotations

from typing import Any

from runs.frozen import FrozenPlan, FrozenScript
from runs.services import batches

# A launched batch's params in the shape runs/services/batches.py stores, every key set.
LAUNCHED: dict[str, Any] = {
    "test": "oltp_insert",
    "options": {"time": 2, "tables": 1, "table-size": 100, "report-interval": 1},
    "threads": [1, 2],
    "server_settings": {"innodb_flush_log_at_trx_commit": ["1", "2"]},
    "option_axes": {"rate": [0, 50]},
    "repeats": 2,
    "auto": {"repeats": {"target_pct": 5.0, "max": 6}},
    "warmup_s": 1,
    "order_policy": "interleaved",
    "dataset_policy": "shared",
    "cleanup": True,
    "seed": 3141592653,
    "target": {
        "name": "demo-mariadb",
        "engine": "mariadb",
        "host": "127.0.0.1",
        "port": 3307,
        "socket": "",
        "database": "sbtest",
        "user": "bench",
        "cpu_cores": 2,
        "disk_count": 1,
    },
    "targets": [],
    "tests": [],
    "servers": {},
    "load_host": "local",
    "extra_load_hosts": [3, 7],
    "load_split": "each",
    "quiet_wait_s": 30,
    "script": {"name": "point-select", "content": "function event() end"},
}

# An imported log's record (runs/services/imports/importer.py) and a lost scheduled launch's.
IMPORTED: dict[str, Any] = {
    "test": "oltp_read_only",
    "threads": [8],
    "options": {"report-interval": 3, "percentile": 95},
    "server_settings": {},
    "report_interval": 3,
    "percentile": 95,
    "version": "1.0.20",
    "build": None,
    "command": "sysbench oltp_read_only --threads=8 run",
    "label": "laptop",
    "target": None,
    "source": "import",
}
UNLAUNCHED: dict[str, Any] = {"fired_at": "2026-11-25T02:00:00+00:00"}


def test_a_launched_batch_reads_as_typed_fields_and_writes_back_the_same_dict() -> None:
    plan = FrozenPlan.from_params(LAUNCHED)
    assert plan.test == "oltp_insert"
    assert plan.threads == [1, 2]
    assert plan.dataset_policy == "shared"
    assert plan.warmup_s == 1
    assert plan.extra_load_hosts == [3, 7]
    assert plan.quiet_wait_s == 30
    assert plan.script == FrozenScript(name="point-select", content="function event() end")
    assert plan.target_name == "demo-mariadb"
    assert plan.report_interval == 1
    assert plan.extra == {}
    assert plan.to_params() == LAUNCHED


def test_the_round_trip_keeps_the_plan() -> None:
    for params in (LAUNCHED, IMPORTED, UNLAUNCHED, {}):
        plan = FrozenPlan.from_params(params)
        assert FrozenPlan.from_params(plan.to_params()) == plan


def test_the_plan_shares_nothing_with_the_row_it_was_read_from() -> None:
    params: dict[str, Any] = {"test": "oltp_insert", "threads": [1], "options": {"time": 2}}
    plan = FrozenPlan.from_params(params)
    plan.to_params()["threads"].append(4)
    params["options"]["time"] = 9
    assert plan.threads == [1]
    assert plan.options == {"time": 2}


def test_an_imported_log_keeps_its_own_record_in_extra() -> None:
    plan = FrozenPlan.from_params(IMPORTED)
    assert plan.test == "oltp_read_only"
    assert plan.threads == [8]
    assert plan.report_interval == 3
    assert plan.target is None
    assert plan.extra["version"] == "1.0.20"
    assert plan.extra["source"] == "import"
    stored = plan.to_params()
    assert {k: stored[k] for k in IMPORTED} == IMPORTED


def test_missing_and_null_keys_take_the_defaults_older_rows_were_read_with() -> None:
    for params in ({}, None, UNLAUNCHED, {"test": "fileio", "repeats": None, "script": None}):
        plan = FrozenPlan.from_params(params)
        assert plan.repeats == 1
        assert plan.warmup_s == 0
        assert plan.cleanup is True
        assert plan.auto == {}
        assert plan.load_split == "divide"
        assert plan.extra_load_hosts == []
        assert plan.script is None
        assert plan.target_name is None
        assert plan.dataset_policy is None
    assert FrozenPlan.from_params(UNLAUNCHED).extra == UNLAUNCHED


def test_a_batch_launched_from_a_plan_stores_what_the_frozen_plan_writes(make_plan) -> None:
    plan = make_plan(threads=[1, 2], server_settings={"sync_binlog": ["0", "1"]}, warmup_s=1)
    batch = batches.batch_launch(plan=plan)
    batch.refresh_from_db()
    frozen = FrozenPlan.from_params(batch.params)
    assert frozen.to_params() == batch.params
    assert frozen.test == "oltp_insert"
    assert frozen.threads == [1, 2]
    assert frozen.server_settings == {"sync_binlog": ["0", "1"]}
    assert frozen.seed == batch.seed
    assert frozen.load_host == "local"
    assert frozen.target_name == "private-mariadb"
