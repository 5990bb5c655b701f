"""The sync probe's lines summed up over a run's measured interval: the median time of an
fsync with its interval, the probe's own cost, and why there is no figure. The lines are
the probe's own, as it printed them beside a private MariaDB (runs/loadhosts/sync_probe.py)."""

from __future__ import annotations

import pytest

from runs.analysis.fsyncs import (
    BINLOG,
    DISKSTATS,
    PROBE,
    REDO,
    HostSync,
    crowded,
    host_sync,
    run_fsyncs,
)
from runs.analysis.host_metrics.sync_probe import (
    SyncSite,
    median_interval,
    probe_summary,
    sample_parse,
)
from runs.columns import RunCounters

# Printed by the probe beside a private MariaDB 10.11 (its data directory, O_DIRECT).
LINES = [
    "@@benchdash-sync-start 679.100000",
    "@@benchdash-sync-ready /tmp/benchdash-mariadb-x/data direct 4096 64",
    "679.1020 0.000092 0.000201 0.021000",
    "679.2214 0.000205 0.000254 0.021100",
    "679.2790 0.000152 0.000261 0.021200",
    "679.3602 0.000188 0.000237 0.021300",
    "679.4401 0.000341 0.000396 0.021400",
    "679.5527 0.000184 0.000256 0.021500",
    "679.6684 0.000192 0.000275 0.021600",
    "679.7727 0.003153 0.000229 0.021700",
    "679.9091 0.002672 0.000275 0.021800",
    "680.0177 0.002151 0.000223 0.021900",
    "680.0896 0.001009 0.000262 0.022000",
    "680.1525 0.000246 0.000288 0.022100",
]


def test_the_median_of_the_samples_in_the_measured_interval_is_the_figure():
    # the probe's clock 679.1 is the worker's 1000.0
    found = probe_summary(LINES, offset=320.9, start=1000.1, end=1001.0, every_s=0.2)

    # 679.2214 ... 680.0896: ten samples, the first and the last outside
    assert found["samples"] == 10
    assert found["ms"] == pytest.approx(0.273)  # (0.205 + 0.341) / 2: the median of ten
    assert found["ci_low_ms"] <= found["ms"] <= found["ci_high_ms"]
    assert found["mean_ms"] > found["ms"]  # the stalls weigh on the mean, not the median
    assert (found["dir"], found["mode"], found["block"]) == (
        "/tmp/benchdash-mariadb-x/data", "direct", 4096,
    )  # fmt: skip
    cost = found["cost"]
    assert cost["syncs_s"] == pytest.approx(11 / 1.0505, rel=0.01)
    assert cost["cpu_pct"] == pytest.approx(100 * 0.0011 / 1.0505, rel=0.01)
    assert cost["kb_s"] == pytest.approx(cost["syncs_s"] * 4, rel=0.01)


def test_a_probe_that_could_not_run_or_took_too_few_samples_gives_why():
    refused = ["@@benchdash-sync-start 1.0", "@@benchdash-sync-problem no python3 on db-1"]
    assert probe_summary(refused, offset=0.0, start=0, end=9, every_s=0.2) == {
        "problem": "no python3 on db-1"
    }
    short = probe_summary(LINES, offset=320.9, start=1000.1, end=1000.4, every_s=0.2)
    assert short["problem"].startswith("the sync probe took 4 samples in the measured interval")
    assert "ms" not in short
    silent = probe_summary([], offset=None, start=0, end=9, every_s=0.2)
    assert silent == {"problem": "the sync probe took no sample"}
    failed = [*LINES[:4], "@@benchdash-sync-problem the probe's write or sync failed: No space"]
    stopped = probe_summary(failed, offset=320.9, start=1000.0, end=1001.0, every_s=0.2)
    assert stopped == {"problem": "the probe's write or sync failed: No space"}
    # a probe that failed after the measured interval still gives its figure
    late = probe_summary([*LINES, failed[-1]], offset=320.9, start=1000.1, end=1001.0, every_s=0.2)
    assert late["samples"] == 10 and "problem" not in late


def test_the_interval_of_a_median_is_drawn_from_the_order_statistics():
    ordered = [float(i) for i in range(1, 41)]
    low, high = median_interval(ordered)
    assert (low, high) == (14.0, 27.0)  # 20 ∓ 0.98 √40
    assert median_interval([1.0]) == (1.0, 1.0)


def test_only_the_probes_sample_lines_are_samples():
    sample = sample_parse("679.1020 0.000092 0.000201 0.021000")
    assert sample is not None and sample.sync_ms == pytest.approx(0.092)
    assert sample_parse("@@benchdash-sync-ready /d direct 4096 64") is None
    assert sample_parse("679.1 nan? x y") is None


def test_the_site_gives_the_probe_its_arguments():
    site = SyncSite("/var/lib/mysql", "/var/lib/mysql", 4096, direct=True)
    assert site.argv(0.2) == ["/var/lib/mysql", "/var/lib/mysql", "4096", "1", "0.2"]


REDO_UNTIMED = RunCounters.load(
    {
        "deltas": {"Innodb_data_fsyncs": 1000.0, "pfs_binlog_syncs": 0.0},
        "derived": {"transactions": 1000},
    }
)


def test_the_probe_times_a_class_the_server_does_not_and_is_no_bound():
    summary = {"hosts": [{"role": "server", "flush_ms": 0.05, "sync_probe": {"ms": 0.21}}]}
    assert host_sync(summary) == HostSync(0.21, PROBE, False)
    redo = run_fsyncs(REDO_UNTIMED, host_sync(summary)).get(REDO)
    assert (redo.ms, redo.source, redo.lower_bound) == (0.21, PROBE, False)
    assert redo.latency_text() == "0.210 ms (sync probe)"


def test_without_the_probe_the_devices_flush_time_stands_as_a_bound():
    failed = {"problem": "no python3 on db-1"}
    summary = {"hosts": [{"role": "server", "flush_ms": 0.05, "sync_probe": failed}]}
    assert host_sync(summary) == HostSync(0.05, DISKSTATS, True)
    assert host_sync({"hosts": [{"role": "server"}]}) is None


def test_for_the_growing_binary_log_the_probes_time_is_only_a_bound():
    counters = RunCounters.load(
        {
            "deltas": {"Binlog_group_commits": 500.0},
            "gauges": {"sync_binlog": {"avg": 1.0, "max": 1.0}},
            "derived": {"transactions": 500},
        }
    )
    binlog = run_fsyncs(counters, HostSync(0.2, PROBE, False)).get(BINLOG)
    assert binlog.per_tx == 1.0 and binlog.source == PROBE and binlog.lower_bound


def test_a_probe_on_a_host_busier_than_its_cores_is_said_to_time_the_disk():
    server = {"role": "server", "ncpu": 2, "runq": 5.0, "sync_probe": {"ms": 0.157}}
    assert crowded({"hosts": [server]}).startswith(
        "the server host's run queue (5.0) was above its 2 cores: the sync probe's time is "
        "the disk's"
    )
    assert crowded({"hosts": [{**server, "runq": 1.7}]}) == ""
    assert crowded({"hosts": [{**server, "sync_probe": {"problem": "no python3"}}]}) == ""
