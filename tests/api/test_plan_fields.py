"""Every field of a plan the API writes reads back as it was written: given at POST, and
changed alone by a PATCH that leaves the others as they were (issue 47: server_axes was
answered 201 and dropped)."""

from __future__ import annotations

from typing import Any

import pytest

from runs.api.setup.plans import PlanSerializer
from runs.models import LoadHost, LuaScript, Target

MANAGED = {"installs": [{"label": "10.11", "basedir": "/usr", "datadir": "/srv/mariadb"},
                        {"label": "11.4", "basedir": "/opt/mariadb-11.4",
                         "datadir": "/srv/mariadb-11.4"}],
           "timeout_s": 60}  # fmt: skip


@pytest.fixture
def world(offline_target, local_host, owner) -> dict[str, Any]:
    """The rows a plan's fields point at: targets (two that opted in to restarts), SSH load
    hosts, a custom script."""

    def target(name: str, **more: Any) -> Target:
        return Target.objects.create(
            name=name, engine="mariadb", host="127.0.0.1", port=1, database="sbtest",
            user="bench", created_by=owner, **more,
        )  # fmt: skip

    def ssh(name: str) -> LoadHost:
        return LoadHost.objects.create(
            name=name, kind="ssh", address="10.0.0.9", user="bench", created_by=owner
        )

    return {
        "offline": offline_target,
        "managed": target("db-r", restart_mode="managed", restart_config=MANAGED),
        "managed2": target("db-r2", restart_mode="managed", restart_config=MANAGED),
        "other": target("db-2"),
        "local": local_host,
        "ssh": [ssh("lg1"), ssh("lg2"), ssh("lg3")],
        "script": LuaScript.objects.create(name="mine", content="function event() end\n"),
    }


def base(world: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "every field",
        "target": world["managed"].pk,
        "load_host": world["local"].pk,
        "test": "oltp_insert",
        "options": {"time": 2, "tables": 1, "table-size": 100},
        "threads": [1, 2],
        "server_settings": {"innodb_flush_log_at_trx_commit": ["1", "2"]},
    }


def field_cases(world: dict[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Each writable field: what a POST writes (with what it needs beside it), and what a
    PATCH then writes (the same way)."""
    ssh = [host.pk for host in world["ssh"]]
    servers_1 = {
        "targets": [world["managed2"].pk],
        "installs": ["11.4", "10.11"],
        "configs": [{"label": "b1e1", "text": "innodb_flush_log_at_trx_commit = 1\n"},
                    {"label": "b0e0", "text": "  sync_binlog = 0"}],
        "after_restart": "cold",
        "warm_s": 5,
    }  # fmt: skip
    servers_2 = {"targets": [], "configs": [{"label": "x", "text": ""}], "warm_s": 30}
    tests_1 = [
        {"test": "oltp_insert", "options": {}, "family": "write", "name": "insert"},
        {"test": "oltp_delete", "options": {"tables": 2}, "family": "write", "rebuild": True},
    ]
    tests_2 = [{"test": "oltp_insert", "options": {"table-size": 50}, "family": "w"}]
    repeats = {"repeats": {"target_pct": 3.0, "max": 7, "margin_pct": 1.5}}
    rate = {"rate": {"start": 50, "max": 5000, "slo_p95_ms": 20.0, "tolerance_pct": 3.0,
                     "precision_pct": 20.0}}  # fmt: skip
    # fmt: off
    return {
        "name": ({"name": "first"}, {"name": "second"}),
        "target": ({"target": world["managed"].pk}, {"target": world["managed2"].pk}),
        "servers": ({"servers": servers_1}, {"servers": servers_2}),
        "load_host": ({"load_host": world["local"].pk}, {"load_host": ssh[0]}),
        "extra_load_hosts": (
            # A set, read back in the hosts' order (each host runs the whole cell alike).
            {"load_host": ssh[0], "extra_load_hosts": [ssh[1], ssh[2]], "threads": [4]},
            {"extra_load_hosts": [ssh[1]]},
        ),
        "load_split": (
            {"load_host": ssh[0], "extra_load_hosts": [ssh[1]], "load_split": "each"},
            {"load_split": "divide", "threads": [2, 4]},
        ),
        "test": ({"test": "oltp_delete"}, {"test": "oltp_update_index"}),
        "tests": ({"tests": tests_1}, {"tests": tests_2}),
        "options": (
            {"options": {"time": 3, "tables": 2, "table-size": 50, "percentile": 99,
                         "histogram": "off"}},
            {"options": {"time": 1, "report-interval": 2}},
        ),
        "threads": ({"threads": [1, 4, 16]}, {"threads": [8]}),
        "server_settings": (
            {"server_settings": {"innodb_flush_log_at_trx_commit": ["2", "1"],
                                 "innodb_log_buffer_size": ["16M", "32M"]}},
            {"server_settings": {"sync_binlog": ["1", "0"]}},
        ),
        "option_axes": ({"option_axes": {"tables": [1, 4]}, "options": {"time": 2}},
                        {"option_axes": {"table-size": [100, 1000]}}),
        "repeats": ({"repeats": 4}, {"repeats": 1}),
        "warmup_s": ({"warmup_s": 1}, {"warmup_s": 0}),
        "order_policy": ({"order_policy": "ramp"}, {"order_policy": "interleaved"}),
        "dataset_policy": ({"dataset_policy": "fresh"}, {"dataset_policy": "existing"}),
        "cleanup": ({"cleanup": False}, {"cleanup": True}),
        "seed": ({"seed": 4242}, {"seed": None}),
        "quiet_wait_s": ({"quiet_wait_s": 5}, {"quiet_wait_s": 0}),
        "script": (
            {"script": world["script"].pk, "test": "oltp_read_write",
             "dataset_policy": "existing", "options": {"time": 2}},
            {"script": None},
        ),
        "notify_emails": ({"notify_emails": "a@example.com\nb@example.com"},
                          {"notify_emails": ""}),
        "notify_webhook": ({"notify_webhook": "http://localhost:8000/hooks/a"},
                           {"notify_webhook": "http://localhost:8000/hooks/b"}),
        "regression_threshold_pct": ({"regression_threshold_pct": 7.5},
                                     {"regression_threshold_pct": 0.5}),
        "history_nights": ({"history_nights": 9}, {"history_nights": 30}),
        "auto": ({"auto": repeats}, {"auto": rate}),
    }
    # fmt: on


WRITABLE = sorted(name for name, field in PlanSerializer().fields.items() if not field.read_only)


def test_every_writable_field_has_its_round_trip_below(world):
    assert sorted(field_cases(world)) == WRITABLE


@pytest.mark.parametrize("field", WRITABLE)
def test_a_field_reads_back_as_posted_and_as_patched(api, world, field):
    posted, patched = field_cases(world)[field]

    created = api.post("/api/v1/plans", json={**base(world), **posted})

    assert created.status_code == 201, created.text
    plan = f"/api/v1/plans/{created.json()['id']}"
    read = api.get(plan).json()
    for name, value in posted.items():
        assert read[name] == value, name
    changed = api.patch(plan, json=patched)
    assert changed.status_code == 200, changed.text
    again = api.get(plan).json()
    for name, value in patched.items():
        assert again[name] == value, name
    untouched = set(read) - set(patched) - {"updated_at"}
    assert {n: again[n] for n in untouched} == {n: read[n] for n in untouched}
