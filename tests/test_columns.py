"""The typed readers of a run's summary and counters, a batch's environment and a night's
check read what the worker and the nightly check store, and read older or partial rows as
empty."""

from __future__ import annotations

from typing import Any

import pytest

from runs.analysis.summary import summarise
from runs.columns import BatchEnvironment, NightCheck, RunCounters, RunSummary
from tests.sysbench.test_parser import parse


@pytest.mark.parametrize(
    ("fixture", "throughput"),
    [
        ("oltp_read_write", (561.24, "tps")),
        ("fileio", (564.73 + 376.48, "MiB/s")),
        ("memory", (4718.06, "MiB/s")),
        ("cpu", (30063.84, "events/s")),
    ],
)
def test_a_summary_of_real_output_reads_its_headline_rate(
    fixture: str, throughput: tuple[float, str]
) -> None:
    figures = RunSummary.load(summarise(parse(fixture), warmup_s=0))
    assert figures.throughput == pytest.approx(throughput)
    assert figures.latency_pct == 95.0


def test_a_summary_reads_the_sql_figures_as_numbers() -> None:
    figures = RunSummary.load(summarise(parse("oltp_read_write"), warmup_s=0))
    assert (figures.tps, figures.qps, figures.errors) == (561.24, 11295.64, 13.0)
    assert (figures.latency_pct_ms, figures.latency_avg_ms) == (5.28, 3.56)
    assert figures.eps is None
    assert len(figures.interval_batch_means) == 1


def test_a_summary_without_a_report_reads_as_no_figures() -> None:
    for data in (None, {}, {"outcome": "error", "warmup_s": 0, "interval_tps": None}):
        figures = RunSummary.load(data)
        assert figures.throughput == (None, "tps")
        assert figures.latency_pct_ms is None
        assert figures.interval_batch_means == []
    assert RunSummary.load({"tps": True, "qps": "12"}).tps is None  # not numbers: none


# A batch's environment as runs/execution/environment.py and the preflight record it.
ENVIRONMENT: dict[str, Any] = {
    "load_host": {"hostname": "bench1", "cpu_cores": 2, "sysbench_version": "1.0.20"},
    "server": {
        "version": "10.11.6-MariaDB-0+deb12u1-log",
        "variables": {"sync_binlog": "0", "innodb_flush_log_at_trx_commit": "1"},
    },
    "reference": {"threads": 5, "cpu_cores": 2, "disk_count": 1},
    "server_host": {"hostname": "db1"},
    "preflight": {"ok": True, "steps": [], "at": "2026-11-25T16:00:00+00:00"},
}


def test_an_environment_reads_the_server_the_hosts_and_the_reference() -> None:
    env = BatchEnvironment.load(ENVIRONMENT)
    assert env.server_version == "10.11.6-MariaDB-0+deb12u1-log"
    assert env.server_variables["sync_binlog"] == "0"
    assert env.server == ENVIRONMENT["server"]
    assert env.sysbench_version == "1.0.20"
    assert env.reference["threads"] == 5
    assert env.server_host == {"hostname": "db1"}
    assert env.preflight["ok"] is True
    assert env.imported == {}


def test_an_environment_not_recorded_yet_or_imported_reads_as_empty() -> None:
    for data in (None, {}, {"server": None, "load_host": None}):
        env = BatchEnvironment.load(data)
        assert env.server_version == ""
        assert env.server_variables == {}
        assert env.sysbench_version == "unknown"
        assert env.reference == {}
    imported = BatchEnvironment.load({"imported": {"version": "1.0.20", "header": {}}})
    assert imported.imported["version"] == "1.0.20"
    assert imported.load_host == {}


def test_counters_read_deltas_ratios_and_gauges() -> None:
    counters = RunCounters.load(
        {
            "readings": 4,
            "error": "",
            "deltas": {"Innodb_os_log_fsyncs": 120.0},
            "derived": {"transactions": 60, "per_transaction": {}},
            "gauges": {"Threads_running": {"avg": 1.5, "max": 3}},
        }
    )
    assert counters.deltas == {"Innodb_os_log_fsyncs": 120.0}
    assert counters.transactions == 60.0
    assert counters.gauges["Threads_running"]["max"] == 3


def test_counters_of_a_run_without_readings_read_as_empty() -> None:
    for data in (None, {}, {"readings": 1, "error": "access denied"}):
        counters = RunCounters.load(data)
        assert counters.deltas == {}
        assert counters.gauges == {}
        assert counters.transactions == 0.0


def test_a_night_check_reads_its_verdict_and_cells() -> None:
    check = NightCheck.load(
        {
            "status": "regression",
            "summary": "1 of 2 cells slower",
            "rule": {"text": "a change worse than ...", "window": 7},
            "flagged": ["threads=1"],
            "cells": [{"identity": "a", "label": "threads=1", "checks": []}, "not a cell"],
        }
    )
    assert check.status == "regression"
    assert check.summary == "1 of 2 cells slower"
    assert check.rule == {"text": "a change worse than ...", "window": 7}
    assert check.cells == [{"identity": "a", "label": "threads=1", "checks": []}]


def test_a_batch_that_is_not_a_night_has_no_verdict() -> None:
    for data in (None, {}, {"cells": None}):
        check = NightCheck.load(data)
        assert check.status is None
        assert check.summary is None
        assert check.rule is None
        assert check.cells == []
