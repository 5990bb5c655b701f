# ruff: noqa: RUF001  (the times sign is what people read in answers)
"""A cell's budget per transaction and what moved between two cells, on runs recorded on a
private MariaDB 10.11 (performance_schema off, binary logging on): single-thread
oltp_insert, 4 s, 3 repeats of flush=1 sync_binlog=1, flush=1 sync_binlog=0 and flush=0
sync_binlog=0, interleaved on a busy 2-core machine (tps of one cell ranges 2x). Each
run: the counter sampler's summary, and a host summary read from /proc around the run
(mariadbd's utime/stime and its threads' context switches, the host's ctxt and disk
operations) in the schema of `Run.host_summary`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runs.analysis.results import RunFigures
from runs.analysis.why import budget
from runs.analysis.why import panel as why

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded" / "budget_insert.json"


def cell(flush: str, sync_binlog: str, *, telemetry: bool = True) -> list[RunFigures]:
    runs = json.loads(RECORDED.read_text())
    return [
        RunFigures(
            id=i, position=i, round=r["repeat"] - 1, threads=1,
            settings={"innodb_flush_log_at_trx_commit": flush, "sync_binlog": sync_binlog},
            axis_options={}, status="done",
            summary={"tps": r["tps"], "latency_avg_ms": r["latency_avg_ms"]},
            counters=r["counters"],
            host_summary=r["host_summary"] if telemetry else {},
        )
        for i, r in enumerate(runs)
        if (r["flush"], r["sync_binlog"]) == (flush, sync_binlog)
    ]  # fmt: skip


def side(label: str, runs: list[RunFigures]) -> why.SideFigures:
    found = why.side_figures(label, runs)
    assert found is not None
    return found


def test_sync_binlog_1_counts_the_binlog_fsync_from_the_group_commits():
    both = side("sync_binlog=1", cell("1", "1")).budget
    log_only = side("sync_binlog=0", cell("1", "0")).budget

    assert both.log_fsyncs == pytest.approx(1.0, abs=0.01)
    assert both.binlog_fsyncs == pytest.approx(1.0)
    assert both.fsyncs == pytest.approx(2.0, abs=0.01)  # not 1.00: the binlog's counted
    assert both.binlog_fsyncs_from == "Binlog_group_commits ÷ sync_binlog"
    assert log_only.binlog_fsyncs == 0.0  # sync_binlog=0: the server never syncs it
    assert log_only.fsyncs == pytest.approx(1.0, abs=0.01)


def test_the_budget_divides_the_servers_work_by_its_transactions():
    runs = cell("1", "1")
    spent = side("flush=1", runs).budget
    # the median of the runs, each run's figure over its own throughput
    per_run = sorted(r.host_summary["hosts"][0]["db"]["user_cores"] / (r.throughput or 1) * 1e6
                     for r in runs)  # fmt: skip
    assert spent.cpu_user_us == pytest.approx(per_run[1])
    assert spent.ranges["cpu_user_us"] == pytest.approx((per_run[0], per_run[2]))
    assert spent.cpu_user_us == pytest.approx(69.13, abs=0.01)  # 0.1417 cores / 2,050 tps
    assert spent.log_bytes == pytest.approx(468.5, abs=0.1)
    assert spent.binlog_bytes == pytest.approx(407.0)
    assert spent.db_switches is not None and spent.host_switches is not None
    assert spent.db_switches < spent.host_switches  # the process's share of the host's
    assert spent.ios == pytest.approx(5.42, abs=0.01)
    assert spent.missing == ""


def test_off_cpu_time_is_the_latency_less_the_server_cpu_per_transaction():
    runs = cell("1", "1")
    spent = side("flush=1", runs).budget

    assert spent.cpu_us is not None and spent.off_cpu_us is not None
    assert spent.off_cpu_us == pytest.approx(spent.time_us - spent.cpu_us)
    assert spent.off_cpu_us == pytest.approx(577.22, abs=0.01)


def test_the_why_rows_time_per_transaction_is_the_budgets():
    # issue 36: the why row's "ms / trx" was the geometric mean of the repeats' average
    # latency (0.776 ms) and the budget's "time (average latency)" their median (510 µs),
    # for the same cell; one source now, the geometric mean, as the throughput's
    runs = cell("1", "1")
    found = side("flush=1", runs)
    latencies = [r.summary["latency_avg_ms"] * 1000 for r in runs]
    assert sorted(latencies)[1] == 510.0  # the median the budget showed before
    assert found.budget.time_us == pytest.approx(776.01, abs=0.01)
    assert found.time_ms * 1000 == pytest.approx(found.budget.time_us)


def test_time_unchanged_beside_a_moved_throughput_says_so():
    # issue 36: "time per transaction unchanged" sat beside a measured 1.29x
    base = budget.Budget(time_us=2170.0, cpu_user_us=40.0, cpu_system_us=1.0, off_cpu_us=2129.0)
    other = budget.Budget(time_us=2200.0, cpu_user_us=40.0, cpu_system_us=1.0, off_cpu_us=2159.0)
    unchanged = "time per transaction unchanged (2,170 → 2,200 µs)"
    assert budget.moved("b", base, other).endswith(unchanged)
    said = budget.moved("b", base, other, measured=1.29)
    assert said.endswith(
        "time per transaction unchanged (2,170 → 2,200 µs) although throughput moved 1.29×: "
        "the difference is not in the transactions' own time (the client, or how many ran at "
        "once)"
    )


def test_what_moved_with_sync_binlog_1_in_one_sentence():
    base = side("sync_binlog=0", cell("1", "0"))
    other = side("sync_binlog=1", cell("1", "1"))

    answer = why.explain(base, other, threads=1)

    assert answer.moved == (
        "sync_binlog=1 adds 1.0 fsync, 3.1 context switches and 3.0 I/Os per transaction; "
        "server CPU per transaction up 51 % (132 → 199 µs); "
        "off-CPU time explains 85 % of the difference"
    )
    pair = answer.to_dict()
    assert pair["moved"] == answer.moved
    assert pair["other"]["budget"]["fsyncs"] == pytest.approx(2.0, abs=0.01)
    assert pair["base"]["budget"]["cpu_us"] == pytest.approx(131.9, abs=0.1)
    json.dumps(pair)  # the API and the stored results hold it as JSON


def test_the_noise_between_repeats_is_not_a_move():
    # flush=1 with and without sync_binlog: the server's CPU per transaction of the runs
    # ranges 132-157 µs against 161-238 µs; make the ranges overlap and it is "unchanged".
    base, other = side("a", cell("1", "0")).budget, side("b", cell("1", "1")).budget
    assert budget.moved("b", base, other).count("unchanged") == 0
    wide = budget.Budget(**{**base.__dict__, "ranges": {**base.ranges, "cpu_us": (100.0, 250.0)}})

    sentence = budget.moved("b", wide, other)

    assert "server CPU per transaction unchanged (132 → 199 µs)" in sentence


def test_the_same_cell_twice_moves_nothing():
    spent = side("a", cell("0", "0")).budget

    assert budget.moved("a", spent, spent) == (
        "a changes no fsync, context switch or I/O count per transaction; "
        "server CPU per transaction unchanged (41 → 41 µs); time per transaction unchanged "
        "(83 → 83 µs)"
    )


def test_without_telemetry_only_the_counters_speak_and_it_says_what_is_missing():
    base = side("flush=0", cell("0", "0", telemetry=False))
    other = side("flush=1", cell("1", "1", telemetry=False))

    answer = why.explain(base, other, threads=1)

    assert other.budget.cpu_user_us is None and other.budget.off_cpu_us is None
    assert other.budget.fsyncs == pytest.approx(2.0, abs=0.01)
    assert other.budget.missing == (
        "server CPU, off-CPU time, context switches and I/Os per transaction need the "
        "server host's telemetry (none was recorded)"
    )
    assert answer.moved == (
        "flush=1 adds 2.0 fsyncs per transaction; server CPU, off-CPU time, context "
        "switches and I/Os per transaction need the server host's telemetry (none was "
        "recorded)"
    )


def test_a_server_host_the_sampler_could_not_read_is_named():
    runs = [
        RunFigures(**{**r.__dict__, "host_summary": {"hosts": [], "missing": [
            {"role": "server", "host": "", "why": "the target has no server host"}]}})
        for r in cell("1", "1")
    ]  # fmt: skip

    spent = side("x", runs).budget

    assert spent.missing.endswith("need the server host's telemetry: the target has no server host")


def test_the_untimed_fsyncs_name_the_cause_the_sampler_found():
    base, other = side("flush=0", cell("0", "0")), side("flush=1", cell("1", "1"))

    answer = why.explain(base, other, threads=1)

    assert answer.predicted is None
    assert "fsync latency was not measured (performance_schema is off; set " in answer.text
    assert "restart the server: it cannot be turned on at run time)" in answer.text
