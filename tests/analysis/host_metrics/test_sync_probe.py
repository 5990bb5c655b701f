"""The sync probe's lines summed up over a run's measured interval: the median time of an
fsync with its interval, the probe's own cost, and why there is no figure. The lines are
the probe's own, as it printed them beside a private MariaDB (runs/loadhosts/sync_probe.py)."""

from __future__ import annotations

import math

import pytest

from runs.analysis.host_metrics.sync_probe import (
    SyncSite,
    median_interval,
    probe_summary,
    sample_parse,
)
from runs.analysis.why.fsyncs import (
    BINLOG,
    DISKSTATS,
    PROBE,
    REDO,
    HostSync,
    crowded,
    host_sync,
    run_fsyncs,
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


# Printed by the probe as it runs now, on this project's machine while it was quiet: each
# sample a sync after a pause, then one at once after it (the fifth figure).
TWO_SYNC_LINES = [
    "@@benchdash-sync-start 805.178249",
    "@@benchdash-sync-ready /work/main/var/probe_dir direct 4096 64",
    "805.349998 0.000126 0.000308 0.044753 0.000025",
    "805.603313 0.000155 0.000223 0.045115 0.000032",
    "805.814008 0.000103 0.000249 0.045446 0.000025",
    "805.967034 0.000309 0.000385 0.046089 0.000071",
    "806.069935 0.000082 0.000197 0.046417 0.000023",
    "806.219640 0.000088 0.000292 0.046746 0.000024",
    "806.341936 0.000271 0.000460 0.047352 0.000102",
    "806.479653 0.000085 0.000206 0.047839 0.000026",
    "806.711897 0.000100 0.000261 0.048212 0.000027",
    "806.977014 0.000079 0.000202 0.048522 0.000021",
    "807.179440 0.000142 0.000240 0.048886 0.000029",
]


def test_a_sync_at_once_after_another_is_summed_up_apart_from_one_after_a_pause():
    found = probe_summary(TWO_SYNC_LINES, offset=0.0, start=805.3, end=807.2, every_s=0.2)

    assert found["samples"] == 11
    assert found["ms"] == pytest.approx(0.103)  # after a pause: the median of eleven
    assert found["streamed_ms"] == pytest.approx(0.026)  # at once after: a quarter of it
    # two syncs a sample: 2 x 10 between the first and the last sample's clock
    assert found["cost"]["syncs_s"] == pytest.approx(20 / (807.179440 - 805.349998), rel=0.01)
    # a probe of before prints four figures: no streamed figure, the one it has stands
    assert (
        probe_summary(LINES, offset=320.9, start=1000.1, end=1001.0, every_s=0.2)["streamed_ms"]
        is None
    )


def test_the_probes_time_is_taken_after_the_pause_the_servers_own_syncs_had():
    host = HostSync(0.10, PROBE, False, streamed_ms=0.025)
    assert host.at_pace(0.0) == pytest.approx(0.025)  # back to back
    assert host.at_pace(20.0) == pytest.approx(0.10)  # after a long pause
    # 6.3 ms: 88 % of the way from 0.2 to 10 ms in its log
    share = math.log(6.3 / 0.2) / math.log(10 / 0.2)
    assert host.at_pace(6.3) == pytest.approx(0.025 + share * 0.075)
    assert HostSync(0.10, PROBE, False).at_pace(0.0) == 0.10  # a probe of before
    assert host.at_pace(None) == 0.10

    # 1,000 redo-log syncs in 10 s (10 ms apart), by a thread always in a transaction:
    # each sync right after the last transaction's work, as at full speed
    full_speed = RunCounters.load(
        {**REDO_UNTIMED_DATA, "duration_s": 10.0, "derived": {"transactions": 1000, "busy": 1.0}}
    )
    assert run_fsyncs(full_speed, host).get(REDO).ms == pytest.approx(0.025)
    # the same, held to a rate: 2 % of the time in a transaction, 9.8 ms idle before each
    held = RunCounters.load(
        {**REDO_UNTIMED_DATA, "duration_s": 10.0, "derived": {"transactions": 1000, "busy": 0.02}}
    )
    share = math.log(9.8 / 0.2) / math.log(10 / 0.2)
    assert run_fsyncs(held, host).get(REDO).ms == pytest.approx(0.025 + share * 0.075)


REDO_UNTIMED_DATA = {
    "deltas": {"Innodb_data_fsyncs": 1000.0, "pfs_binlog_syncs": 0.0},
    "derived": {"transactions": 1000},
}
REDO_UNTIMED = RunCounters.load(REDO_UNTIMED_DATA)


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
    # a run at full speed keeps 2.3 busy on 2 cores by itself: the probe agreed there
    assert crowded({"hosts": [{**server, "runq": 2.3}]}) == ""
    assert crowded({"hosts": [{**server, "runq": 3.1}]}) != ""
    assert crowded({"hosts": [{**server, "sync_probe": {"problem": "no python3"}}]}) == ""
