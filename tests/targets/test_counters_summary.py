"""Deltas, rates, gauges and ratios of the counters read during a run."""

from __future__ import annotations

from runs.targets.counters import counters_summary


def test_deltas_rates_gauges_and_ratios_from_the_first_and_last_readings():
    readings = [
        (0.0, {"Com_select": 100.0, "Innodb_rows_read": 500.0, "Threads_running": 1.0}),
        (1.0, {"Com_select": 1100.0, "Innodb_rows_read": 1500.0, "Threads_running": 3.0}),
        (2.0, {"Com_select": 2100.0, "Innodb_rows_read": 2520.0, "Threads_running": 2.0}),
    ]
    reports = [{"sql": {"queries": 1000, "transactions": 1000}}, {"sql": {"queries": 1000}}]

    summary = counters_summary(readings, reports)

    assert summary["readings"] == 3
    assert summary["duration_s"] == 2.0
    assert summary["deltas"] == {"Com_select": 2000.0, "Innodb_rows_read": 2020.0}
    assert summary["per_second"]["Com_select"] == 1000.0
    assert summary["gauges"] == {"Threads_running": {"avg": 2.0, "max": 3.0}}
    # both reports count: a checkpoint splits a run's counts
    assert summary["derived"]["queries"] == 2000
    assert summary["derived"]["rows_read_per_query"] == 1.01


def test_without_sysbench_counts_the_server_s_statements_count_as_queries():
    first = {k: 0.0 for k in ("Com_select", "Com_insert", "Com_update", "Com_delete")}
    last = {**first, "Com_select": 40.0, "Com_update": 10.0}
    summary = counters_summary([(0.0, first), (1.0, last)], [])
    assert summary["derived"]["queries"] == 50.0


def test_a_single_reading_gives_no_deltas():
    assert counters_summary([(0.0, {"Com_select": 1.0})], [], error="lost") == {
        "readings": 1,
        "error": "lost",
    }


def test_the_share_of_the_run_a_thread_spent_in_transactions_is_sysbenchs_fairness():
    readings = [(0.0, {"Com_commit": 0.0}), (10.0, {"Com_commit": 1500.0})]
    # sysbench's final report at --rate=150: 1,500 transactions of 0.4 ms in 10 s
    held = [{"general": {"total_time_s": 10.0}, "fairness": {"exec_time_avg": 0.6}}]
    assert counters_summary(readings, held)["derived"]["busy"] == 0.06
    # a checkpoint's report and the final one: their sums
    split = [
        {"general": {"total_time_s": 5.0}, "fairness": {"exec_time_avg": 4.9}},
        {"general": {"total_time_s": 5.0}, "fairness": {"exec_time_avg": 5.0}},
    ]
    assert counters_summary(readings, split)["derived"]["busy"] == 0.99
    assert "busy" not in counters_summary(readings, [{"sql": {"transactions": 5}}])["derived"]
