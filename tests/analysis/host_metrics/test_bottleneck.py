"""The bottleneck of a cell, on recorded host summaries: a saturated load host, a
saturated server, fsyncs, a disk, waiting, one machine for both, and a noisy one."""

from __future__ import annotations

from runs.analysis.host_metrics.bottleneck import (
    MIN_COVERAGE,
    RunLoad,
    bottleneck_classify,
    busy_start_text,
    fsync_figures,
)
from runs.analysis.host_metrics.host_summary import HostSeries, host_summary, seconds_missing


def host(role: str, name: str, busy: float, **extra: object) -> dict:
    entry = {
        "role": role,
        "host": name,
        "cpu": {
            "user": busy * 0.7,
            "system": busy * 0.3,
            "iowait": 0.0,
            "steal": 0.0,
            "idle": 100 - busy,
        },
        "busy_pct": busy,
        "ncpu": 2,
        "runq": 1.0,
        "util_pct": 0.0,
        "rx_kbs": 10.0,
        "tx_kbs": 10.0,
    }
    entry.update(extra)
    return entry


FLAT = RunLoad(tps=[100.0, 101.0, 99.0, 100.0], latency_ms=10.0)
NOISY = RunLoad(tps=[100.0, 180.0, 40.0, 150.0], latency_ms=10.0)


def test_a_saturated_load_host_measures_the_client():
    summary = {"hosts": [host("server", "db", 40.0), host("load", "lh", 97.0)]}
    verdict = bottleneck_classify(summary, FLAT)
    assert verdict["kind"] == "load_cpu"
    assert verdict["client_bound"] is True
    assert any("this figure measures the client" in e for e in verdict["evidence"])
    assert any("97 % busy" in e for e in verdict["evidence"])


def test_a_saturated_server_is_cpu_bound():
    db = {"user_cores": 1.5, "system_cores": 0.3, "cpu_us_per_tx": 180.0}
    summary = {"hosts": [host("server", "db", 93.0, db=db), host("load", "lh", 30.0)]}
    verdict = bottleneck_classify(summary, FLAT)
    assert verdict["kind"] == "server_cpu" and verdict["client_bound"] is False
    assert any("180 µs of CPU per transaction" in e for e in verdict["evidence"])


def test_fsyncs_that_take_most_of_the_latency_are_the_bottleneck():
    summary = {"hosts": [host("server", "db", 10.0), host("load", "lh", 5.0)]}
    load = RunLoad(tps=[300.0] * 4, latency_ms=3.0, fsyncs_per_tx=2.0, fsync_ms=1.2)
    verdict = bottleneck_classify(summary, load)
    assert verdict["kind"] == "fsync"
    assert "2.00 fsync per transaction" in verdict["evidence"][0]
    assert "(80 %)" in verdict["evidence"][0]


def test_a_busy_disk_is_io_bound():
    server = host("server", "db", 30.0, util_pct=96.0, iops=3200.0, mbs=48.0)
    verdict = bottleneck_classify({"hosts": [server]}, NOISY)
    assert verdict["kind"] == "io"
    assert "96 % utilised" in verdict["evidence"][0]


def test_idle_hosts_and_flat_tps_are_waiting():
    summary = {"hosts": [host("server", "db", 12.0), host("load", "lh", 8.0)]}
    verdict = bottleneck_classify(summary, FLAT)
    assert verdict["kind"] == "waiting"
    assert "flat at 100" in verdict["evidence"][0]


def test_a_noisy_run_on_idle_hosts_is_not_called_waiting():
    summary = {"hosts": [host("server", "db", 12.0), host("load", "lh", 8.0)]}
    verdict = bottleneck_classify(summary, NOISY)
    assert verdict["kind"] == "unknown"


def test_one_machine_for_both_says_who_used_the_cpu():
    shared = host("server", "local", 98.0, db={"user_cores": 0.4, "system_cores": 0.2})
    summary = {"hosts": [shared, {**shared, "role": "load"}]}
    verdict = bottleneck_classify(
        summary, RunLoad(tps=[1.0, 1.0], latency_ms=1.0, same_machine=True)
    )
    assert verdict["kind"] == "load_cpu"  # the database used 30 % of 98 %
    assert verdict["same_machine"] is True
    assert any("database server's machine" in e for e in verdict["evidence"])
    assert "database process 30 %" in verdict["evidence"][0]


def test_a_network_moving_most_of_a_link():
    summary = {"hosts": [host("load", "lh", 30.0, rx_kbs=60_000.0, tx_kbs=50_000.0)]}
    assert bottleneck_classify(summary, NOISY)["kind"] == "network"


def test_nothing_sampled_is_unknown():
    verdict = bottleneck_classify({"hosts": [], "missing": []}, FLAT)
    assert verdict["kind"] == "unknown"
    assert "no host metrics" in verdict["evidence"][0]


def test_a_busy_start_is_flagged():
    assert busy_start_text({"lh": 3.0}) == ""
    assert "lh 60 %" in busy_start_text({"lh": 60.0, "db": 2.0})
    verdict = bottleneck_classify({"hosts": []}, RunLoad(tps=[], latency_ms=None,
                                                          busy_start_pct={"lh": 60.0}))  # fmt: skip
    assert verdict["busy_start"].startswith("started on a busy host")


def test_fsyncs_per_transaction_from_the_counters():
    deltas = {
        "Innodb_os_log_fsyncs": 1000.0,
        "pfs_binlog_syncs": 1000.0,
        "pfs_binlog_sync_ps": 1000.0 * 2e9,
    }
    counters = {"deltas": deltas, "derived": {"transactions": 1000}}
    untimed_redo = fsync_figures(counters)
    # the redo log's fsyncs have no timer of their own: never the binary log's time for them
    assert untimed_redo.per_tx == 2.0 and untimed_redo.ms is None
    timed = {**deltas, "pfs_log_file_syncs": 1000.0, "pfs_log_file_sync_ps": 1e12}
    both = fsync_figures({**counters, "deltas": timed})
    assert both.per_tx == 2.0 and both.ms == 1.5  # (1 ms + 2 ms) / 2
    assert "redo log 1.00/trx" in both.text and "2.000 ms (performance_schema)" in both.text
    empty = fsync_figures({})
    assert (empty.per_tx, empty.ms) == (None, None)


def test_the_redo_logs_fsyncs_are_timed_by_the_hosts_device_as_a_lower_bound():
    counters = {"deltas": {"Innodb_data_fsyncs": 500.0}, "derived": {"transactions": 500}}
    summary = {"hosts": [dict(host("server", "db", 20.0), flush_s=500.0, flush_ms=0.05)]}
    figures = fsync_figures(counters, summary)
    assert figures.per_tx == 1.0 and figures.ms == 0.05 and figures.lower_bound
    assert "≥ 0.050 ms (/proc/diskstats)" in figures.text
    load = RunLoad(tps=[1000.0], latency_ms=0.08, fsyncs_per_tx=1.0, fsync_ms=0.05,
                   fsync_text=figures.text, fsync_lower_bound=True)  # fmt: skip
    verdict = bottleneck_classify(summary, load)
    assert verdict["kind"] == "fsync"
    assert "= at least 0.050 ms of the 0.080 ms latency (62 %)" in verdict["evidence"][0]


def test_one_machine_busy_before_sysbench_is_not_called_cpu_bound():
    shared = host("server", "local", 89.0, db={"user_cores": 0.3, "system_cores": 0.1})
    summary = {"hosts": [shared, {**shared, "role": "load"}]}
    load = RunLoad(
        tps=[300.0] * 4, latency_ms=3.0, fsyncs_per_tx=2.0, fsync_ms=1.2,
        same_machine=True, busy_start_pct={"local": 91.0},
    )  # fmt: skip
    verdict = bottleneck_classify(summary, load)
    assert verdict["kind"] == "fsync"
    assert verdict["busy_start"].startswith("started on a busy host")


def saturated_rows(seconds: int) -> list[tuple[float, dict]]:
    cpu = {"user": 86.0, "system": 14.0, "iowait": 0.0, "steal": 0.0, "idle": 0.0}
    return [(float(t), {"cpu": cpu, "ncpu": 2, "runq": 9.0}) for t in range(1, seconds + 1)]


def test_no_bottleneck_is_drawn_from_a_load_host_sampled_over_part_of_the_run():
    """A load host whose sampler stopped after 6 of 20 s, saturated over those 6: not
    load_cpu; the evidence says the telemetry was incomplete."""
    series = [
        HostSeries("server", "db", saturated_rows(20), run_s=20.0, unwritten_s=1.0),
        HostSeries("load", "lh", saturated_rows(6), run_s=20.0, unwritten_s=0.0),
    ]
    summary = host_summary(series, warmup_s=0.0, tps=100.0)
    load_entry = summary["hosts"][1]
    assert (load_entry["seconds"], load_entry["run_s"], load_entry["coverage"]) == (6, 20, 0.3)
    assert seconds_missing(series[1]) and not seconds_missing(series[0])

    verdict = bottleneck_classify(summary, FLAT)

    assert verdict["kind"] == "unknown" and verdict["client_bound"] is False, verdict
    assert verdict["evidence"] == [
        "host metrics cover only 6 of 20 s of the load host lh: telemetry was incomplete, "
        "no bottleneck drawn from part of the run"
    ]


def test_most_of_the_run_is_enough_and_the_last_unwritten_seconds_are_no_gap():
    """Coverage at MIN_COVERAGE draws the bottleneck; a stream still alive at the end
    (its last write not come yet) covers the whole run."""
    at_least = round(20 * MIN_COVERAGE)
    series = [HostSeries("load", "lh", saturated_rows(at_least), run_s=20.0)]
    assert bottleneck_classify(host_summary(series, warmup_s=0.0, tps=1.0), FLAT)["kind"] == (
        "load_cpu"
    )
    alive = HostSeries("load", "lh", saturated_rows(18), run_s=20.0, unwritten_s=2.0)
    assert host_summary([alive], warmup_s=0.0, tps=1.0)["hosts"][0]["coverage"] == 1.0
    assert not seconds_missing(alive)


def test_a_server_host_saturated_by_other_processes_says_their_share():
    # A CPU burner beside the cell: the host at 100 %, the database at 20 % of it.
    busy = host("server", "db", 100.0, db={"user_cores": 0.3, "system_cores": 0.1})
    summary = {"hosts": [busy, host("load", "lh", 10.0)]}
    verdict = bottleneck_classify(summary, RunLoad(tps=[100.0, 400.0], latency_ms=5.0))
    assert verdict["kind"] == "other_processes"
    assert verdict["evidence"][0].startswith(
        "db was 100 % busy, mostly with other processes: database 20 %, sysbench 0 %, "
        "others 80 % of its 2 cores"
    )


def test_one_machine_shared_with_a_burner_names_database_sysbench_and_others():
    shared = host("local", "local", 100.0, db={"user_cores": 0.3, "system_cores": 0.1})
    summary = {"hosts": [{**shared, "role": "server"}, {**shared, "role": "load"}]}
    load = RunLoad(tps=[100.0, 300.0], latency_ms=5.0, same_machine=True,
                   busy_start_pct={"local": 60.0})  # fmt: skip
    verdict = bottleneck_classify(summary, load)
    assert verdict["kind"] == "other_processes"
    assert "database 20 %, sysbench 20 %, others 60 %" in verdict["evidence"][0]


def test_fsyncs_under_half_the_latency_that_are_its_largest_part_set_the_pace():
    # one thread: 0.50 ms in fsyncs, 0.28 ms of the database's CPU, 0.27 ms elsewhere
    server = host(
        "server", "db", 40.0, db={"user_cores": 0.1, "system_cores": 0.18, "cpu_us_per_tx": 280.0}
    )
    load = RunLoad(tps=[1000.0] * 4, latency_ms=1.05, fsyncs_per_tx=2.0, fsync_ms=0.25)
    verdict = bottleneck_classify({"hosts": [server]}, load)
    assert verdict["kind"] == "fsync", verdict
    assert (
        "(48 %): more than the database's CPU (0.280 ms) or the rest (0.270 ms)"
        in (verdict["evidence"][0])
    )


def test_fsyncs_under_half_the_latency_beside_a_larger_part_do_not():
    # the database's CPU (0.55 ms) takes more of the transaction than its fsyncs
    server = host(
        "server", "db", 40.0, db={"user_cores": 0.25, "system_cores": 0.3, "cpu_us_per_tx": 550.0}
    )
    load = RunLoad(tps=[1000.0, 700.0, 1200.0], latency_ms=1.05, fsyncs_per_tx=2.0, fsync_ms=0.2)
    assert bottleneck_classify({"hosts": [server]}, load)["kind"] != "fsync"
    # without the database's CPU the share alone decides: under half is not fsync-bound
    bare = host("server", "db", 40.0)
    assert bottleneck_classify({"hosts": [bare]}, load)["kind"] != "fsync"


def test_fsyncs_timed_by_the_probe_on_a_crowded_host_say_the_time_is_the_disks():
    server = host("server", "db", 60.0, runq=5.0, sync_probe={"ms": 0.3},
                  db={"user_cores": 0.1, "system_cores": 0.1, "cpu_us_per_tx": 200.0})  # fmt: skip
    load = RunLoad(tps=[900.0] * 4, latency_ms=1.1, fsyncs_per_tx=2.0, fsync_ms=0.3,
                   fsync_text="redo log 1.00/trx x 0.300 ms (sync probe)")  # fmt: skip
    verdict = bottleneck_classify({"hosts": [server]}, load)
    assert verdict["kind"] == "fsync", verdict
    assert verdict["evidence"][-1].startswith("the server host's run queue (5.0) was above")
