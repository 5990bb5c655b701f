"""The typed readers of a run's summary, counters, host summary and bottleneck, a batch's
environment and a night's check read what the worker and the nightly check store, and read
older or partial rows as empty."""

from __future__ import annotations

from typing import Any

import pytest

from runs.analysis.host_metrics.bottleneck import RunLoad, bottleneck_classify
from runs.analysis.host_metrics.host_summary import HostSeries, host_summary
from runs.analysis.summary import summarise
from runs.columns import (
    BatchEnvironment,
    Bottleneck,
    FsyncTimingRecord,
    HostSummary,
    MissingHost,
    NightCheck,
    RunCounters,
    RunOptions,
    RunSummary,
)
from runs.targets.base import FsyncTiming
from tests.analysis.host_metrics.test_bottleneck import host
from tests.analysis.host_metrics.test_host_summary import rows
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


def test_a_summary_reads_its_outcome_its_interval_median_and_its_queue() -> None:
    stored = summarise(parse("oltp_read_write"), warmup_s=0)
    figures = RunSummary.load(stored)
    assert figures.outcome == "ok" and not figures.forced_shutdown
    assert figures.interval_tps_median == stored["interval_tps"]["median"]
    assert figures.queue_length_max is None  # no --rate: no queue
    rate = summarise(parse("oltp_rate"), warmup_s=0)
    queue = RunSummary.load(rate)
    assert queue.queue_length_max == rate["queue_length_max"]
    assert queue.queue_stall_max == rate["queue_stall_max"]
    assert queue.queue_length_last == rate["queue_length_last"]
    assert queue.queue_length_early_max == rate["queue_length_early_max"]
    assert queue.queue_length_before_last == rate["queue_length_before_last"]
    forced = RunSummary.load(summarise(parse("oltp_forced_shutdown"), warmup_s=0))
    assert forced.forced_shutdown


def test_a_forced_shutdown_reads_its_unfinished_transactions() -> None:
    forced = RunSummary.load({"outcome": "forced_shutdown", "unfinished_transactions": 2})
    assert forced.forced_shutdown and forced.unfinished_transactions == 2


def test_an_older_summary_reads_no_outcome_no_median_and_no_queue() -> None:
    for data in (None, {}, {"interval_tps": None}, {"interval_tps": {"n": 3}}):
        figures = RunSummary.load(data)
        assert figures.outcome == ""
        assert figures.interval_tps_median is None
        assert figures.queue_length_max is None and figures.queue_stall_max is None
        assert figures.unfinished_transactions is None


# A batch's environment as runs/execution/environment.py and the preflight record it.
ENVIRONMENT: dict[str, Any] = {
    "load_host": {"hostname": "bench1", "cpu_cores": 2, "sysbench_version": "1.0.20"},
    "server": {
        "version": "10.11.6-MariaDB-0+deb12u1-log",
        "variables": {"sync_binlog": "0", "innodb_flush_log_at_trx_commit": "1"},
    },
    "reference": {"threads": 5, "cpu_cores": 2, "disk_count": 1},
    "server_host": {"hostname": "db1"},
    "preflight": {"ok": True, "checks": [], "at": "2026-11-25T16:00:00+00:00"},
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
        assert counters.fsync_timing == FsyncTimingRecord(readable=False, reason="", fix="")
        assert counters.missing == []


def test_counters_read_the_fsync_timing_and_the_counters_the_server_lacks() -> None:
    timing = {"readable": False, "reason": "performance_schema is off", "fix": "turn it on"}
    counters = RunCounters.load(
        {"deltas": {}, "fsync_timing": timing, "missing": ["Innodb_rows_read", "SPIN_WAITS"]}
    )
    assert counters.fsync_timing == FsyncTimingRecord(
        False, "performance_schema is off", "turn it on"
    )
    timed = FsyncTiming(readable=True)
    assert RunCounters.load({"fsync_timing": timed.to_dict()}).fsync_timing.readable is True
    assert counters.missing == ["Innodb_rows_read", "SPIN_WAITS"]


def test_a_host_summary_reads_what_the_worker_stores() -> None:
    db = {"user_cores": 0.5, "system_cores": 0.25, "vcsw_s": 300.0, "nvcsw_s": 100.0}
    stored = host_summary(
        [HostSeries("server", "db1", rows(20.0, db=db)), HostSeries("load", "lh", rows(40.0))],
        warmup_s=1.0,
        tps=1000.0,
        missing=[{"role": "load", "host": "lh2", "why": "no SSH"}],
    )
    summary = HostSummary.load(stored)
    server, load = summary.first("server"), summary.first("load")
    assert server is not None and load is not None
    assert (server.host, load.host) == ("db1", "lh")
    assert server.busy_pct == stored["hosts"][0]["busy_pct"] == 25.0
    assert server.iowait_pct == stored["hosts"][0]["cpu"]["iowait"]
    assert server.iops == stored["hosts"][0]["iops"]
    assert server.ctxt_s == stored["hosts"][0]["ctxt_s"]
    entry = stored["hosts"][1]
    assert (load.user_pct, load.system_pct) == (entry["cpu"]["user"], entry["cpu"]["system"])
    assert (load.ncpu, load.runq, load.util_pct) == (
        entry["ncpu"],
        entry["runq"],
        entry["util_pct"],
    )
    assert (load.rx_kbs, load.tx_kbs) == (entry["rx_kbs"], entry["tx_kbs"])
    assert load.ncpu > 0
    assert server.db is not None and (server.db.user_cores, server.db.nvcsw_s) == (0.5, 100.0)
    assert server.cpu_us_per_tx == 750.0
    assert load.db is None and load.cpu_us_per_tx is None  # no database process on it
    assert summary.of_role("server") == [server]
    assert summary.missing == [MissingHost("load", "lh2", "no SSH")]
    assert summary.missing[0].name == "load lh2"


def test_a_host_summary_of_an_older_or_partial_run_reads_as_empty() -> None:
    for data in (None, {}, {"hosts": None, "missing": None}, {"hosts": ["not a host"]}):
        summary = HostSummary.load(data)
        assert summary.hosts == [] and summary.missing == []
        assert summary.first("server") is None
    partial = HostSummary.load({"hosts": [{"role": "server", "host": "db1"}]})
    (server,) = partial.hosts
    assert (server.busy_pct, server.iowait_pct, server.cpu_us_per_tx) == (None, None, None)
    assert (server.ncpu, server.runq, server.db) == (0, None, None)


def test_a_bottleneck_reads_what_the_classifier_stores() -> None:
    stored = bottleneck_classify(
        {"hosts": [host("server", "db", 40.0), host("load", "lh", 97.0)]},
        RunLoad(tps=[100.0, 101.0, 99.0, 100.0], latency_ms=10.0, busy_start_pct={"lh": 60.0}),
    )
    verdict = Bottleneck.load(stored)
    assert verdict.kind == stored["kind"] == "load_cpu"
    assert verdict.evidence == stored["evidence"]
    assert verdict.client_bound is True and verdict.same_machine is False
    assert verdict.busy_start == stored["busy_start"]
    assert verdict.busy_start.startswith("started on a busy host")


def test_a_run_not_classified_has_no_bottleneck() -> None:
    for data in (None, {}, {"kind": None, "evidence": None}):
        verdict = Bottleneck.load(data)
        assert verdict.kind == "" and verdict.evidence == []
        assert not verdict.client_bound and not verdict.same_machine
        assert verdict.busy_start == ""


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


def test_a_runs_options_read_the_rate_the_histogram_and_the_report_interval() -> None:
    stored = {"time": 1, "rate": 20, "histogram": "off", "report-interval": 1, "tables": 4}
    options = RunOptions.load(stored)
    assert (options.rate, options.histogram, options.report_interval) == (20, "off", 1.0)
    assert options.values == stored
    # as the plan editor or an imported command line may give them: strings, booleans
    given = RunOptions.load({"rate": "100", "histogram": False, "report-interval": "0.5"})
    assert (given.rate, given.histogram, given.report_interval) == (100, "False", 0.5)


def test_options_without_a_rate_or_an_interval_read_as_sysbenchs_defaults() -> None:
    for data in (None, {}, {"rate": 0}, {"rate": None}, {"rate": "fast"}):
        options = RunOptions.load(data)
        assert options.rate is None  # no --rate: as fast as it can
        assert options.histogram == "on"  # benchdash's default
    assert RunOptions.load({}).report_interval is None  # the plan's
    assert RunOptions.load({"report-interval": "soon"}).report_interval == 0.0
