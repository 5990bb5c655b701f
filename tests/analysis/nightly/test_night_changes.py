"""What changed (runs/analysis/nightly/night_changes.py): a flagged night's environment against
its baseline nights', in the shapes Batch.environment and Run.host_summary/bottleneck are
recorded in (runs/execution/environment.py, runs/analysis/host_metrics/host_summary.py)."""

from __future__ import annotations

import copy
from typing import Any

from runs.analysis.nightly.night_changes import (
    DATABASE_CPU,
    RunTelemetry,
    night_changes,
    night_facts,
)

ENVIRONMENT: dict[str, Any] = {
    "server": {
        "version": "10.11.8-MariaDB-log",
        "variables": {
            "innodb_flush_log_at_trx_commit": "1",
            "sync_binlog": "1",
            "innodb_buffer_pool_size": "134217728",
            "gtid_binlog_pos": "0-1-100",
        },
    },
    "load_host": {
        "host": "local",
        "hostname": "bench-1",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "kernel": "Linux 6.1.0-26-amd64",
        "cpu_model": "AMD EPYC 7B13",
        "cpu_cores": 2,
        "memory_bytes": 8337113088,
        "sysbench_version": "sysbench 1.0.20",
        "load_average": [0.4, 0.5, 0.6],
    },
}


def host(role, busy, iowait, ctxt_per_tx, cpu_us_per_tx=None):
    entry = {
        "role": role,
        "host": role,
        "busy_pct": busy,
        "cpu": {"iowait": iowait},
        "iops": 120.0,
        "ctxt_per_tx": ctxt_per_tx,
    }
    if cpu_us_per_tx is not None:
        entry["db"] = {"cpu_us_per_tx": cpu_us_per_tx}
    return entry


def telemetry(server_busy=40.0, iowait=1.0, kind="server_cpu"):
    return [
        RunTelemetry(
            label="threads=1",
            host_summary={
                "hosts": [
                    host("server", server_busy, iowait, 9.0, 150.0),
                    host("load", 20.0, 0.0, 4.0),
                ]
            },
            bottleneck={"kind": kind},
        )
    ]


def nights(count, **changes):
    made = []
    for n in range(count):
        environment = copy.deepcopy(ENVIRONMENT)
        environment["server"]["variables"]["gtid_binlog_pos"] = f"0-1-{100 + n}"  # moves
        environment["load_host"]["load_average"] = [n / 10, 0.5, 0.6]
        made.append(night_facts(environment, telemetry(server_busy=40.0 + n % 3)))
    return made


def test_nothing_changed_says_nothing_though_some_variables_move_every_night():
    baseline = nights(7)
    assert night_changes(baseline[0], baseline[1:]) == []


def test_a_server_setting_and_an_upgrade_are_named_with_before_and_after():
    flagged = copy.deepcopy(ENVIRONMENT)
    flagged["server"]["version"] = "10.11.9-MariaDB-log"
    flagged["server"]["variables"]["sync_binlog"] = "0"
    flagged["server"]["variables"]["innodb_flush_log_at_trx_commit"] = "2"
    del flagged["server"]["variables"]["innodb_buffer_pool_size"]
    flagged["load_host"]["kernel"] = "Linux 6.1.0-27-amd64"

    changes = night_changes(night_facts(flagged, telemetry()), nights(7))

    assert [(c["kind"], c["name"], c["before"], c["after"]) for c in changes] == [
        ("fact", "server version", "10.11.8-MariaDB-log", "10.11.9-MariaDB-log"),
        ("fact", "load host kernel", "Linux 6.1.0-26-amd64", "Linux 6.1.0-27-amd64"),
        ("variable", "innodb_buffer_pool_size", "134217728", None),
        ("variable", "innodb_flush_log_at_trx_commit", "1", "2"),
        ("variable", "sync_binlog", "1", "0"),
    ]
    assert changes[0]["text"] == "server version: 10.11.8-MariaDB-log \u2192 10.11.9-MariaDB-log"
    assert changes[2]["text"] == "innodb_buffer_pool_size: 134217728 \u2192 (not set)"
    assert all(c["nights"] == 7 for c in changes)


def test_sysbench_and_load_host_changes_are_facts():
    flagged = copy.deepcopy(ENVIRONMENT)
    flagged["load_host"]["sysbench_version"] = "sysbench 1.1.0"
    flagged["load_host"]["host"] = "bench-2"
    names = [c["name"] for c in night_changes(night_facts(flagged, telemetry()), nights(5))]
    assert names == ["load host", "sysbench version"]


def test_telemetry_moves_beyond_the_noise_and_the_bottleneck_are_said():
    flagged = night_facts(ENVIRONMENT, telemetry(server_busy=85.0, iowait=30.0, kind="fsync"))

    changes = night_changes(flagged, nights(7))

    said = {c["name"]: c for c in changes}
    assert set(said) == {"server CPU busy %", "server iowait %", "threads=1"}
    assert said["server CPU busy %"]["before"] == 41.0
    assert said["server CPU busy %"]["text"] == "server CPU busy %: 41.0 \u2192 85.0 (+107 %)"
    assert said["threads=1"] == {
        **said["threads=1"],
        "kind": "bottleneck",
        "before": "server_cpu",
        "after": "fsync",
    }


def test_a_small_telemetry_move_is_not_a_change():
    flagged = night_facts(ENVIRONMENT, telemetry(server_busy=46.0))
    assert night_changes(flagged, nights(7)) == []


def test_without_baseline_nights_nothing_is_compared():
    assert night_changes(nights(1)[0], []) == []


def test_the_database_cpu_per_transaction_is_named_once():
    # issue 56: the CLI's Markdown said "server server CPU µs per transaction".
    doubled = host("server", 40.0, 1.0, 9.0, 300.0)  # the baseline nights' 150 µs, twice
    run = RunTelemetry(label="threads=1", host_summary={"hosts": [doubled]}, bottleneck={})
    flagged = night_facts(ENVIRONMENT, [run])

    (change,) = night_changes(flagged, nights(7))

    assert change["name"] == DATABASE_CPU == "database CPU \u00b5s per transaction"
    assert change["text"] == f"{DATABASE_CPU}: 150.0 \u2192 300.0 (+100 %)"
    assert not any("server server" in name for name in flagged.telemetry)


def two_target_night(second_version: str, second_flush: str) -> Any:
    """A night over two targets: the second's variables are its own snapshot's, its
    version what its runs read from it."""
    environment = copy.deepcopy(ENVIRONMENT)
    environment["targets"] = {
        "1": {"name": "first", "host": "db1", "port": 3306, "version": "10.11.8-MariaDB-log"},
        "2": {
            "name": "second",
            "host": "db2",
            "port": 3307,
            "version": second_version,
            "variables": {"innodb_flush_log_at_trx_commit": second_flush},
        },
    }
    runs = [
        RunTelemetry(label="threads=1 target=first", target=environment["targets"]["1"]),
        RunTelemetry(label="threads=1 target=second", target=environment["targets"]["2"]),
    ]
    return night_facts(environment, runs)


def test_a_further_target_s_upgrade_and_setting_are_named_by_its_own_record():
    baseline = [two_target_night("11.4.2-MariaDB", "1") for _ in range(5)]
    flagged = two_target_night("11.4.3-MariaDB", "2")

    changes = night_changes(flagged, baseline)

    assert [(c["name"], c["before"], c["after"]) for c in changes] == [
        ("server version on second", "11.4.2-MariaDB", "11.4.3-MariaDB"),
        ("second: innodb_flush_log_at_trx_commit", "1", "2"),
    ]
    assert night_changes(baseline[0], baseline[1:]) == []
