# ruff: noqa: RUF001  (the times sign is what people read in the model's sentence)
"""The why panel's per-transaction time model, on the figures of the issue's example and
of a run of the end-to-end test (MariaDB 10.11, performance_schema timing its data files)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from runs.analysis.results import RunFigures
from runs.analysis.why import panel as why


def run(id_, flush, tps, latency_ms, fsyncs, sync_ps=0.0, syncs=0.0, transactions=10_000,
        timer="log_file", flush_ms=None, extra=None):  # fmt: skip
    deltas = {
        "Innodb_data_fsyncs": fsyncs * transactions,
        "Binlog_bytes_written": 300.0 * transactions,
        **(extra or {}),
    }
    if syncs and timer == "log_file":  # every redo-log fsync, at the recorded time
        scale = fsyncs * transactions / syncs
        syncs, sync_ps = syncs * scale, sync_ps * scale
    if syncs:
        deltas |= {f"pfs_{timer}_syncs": syncs, f"pfs_{timer}_sync_ps": sync_ps}
    hosts = [{"role": "server", "host": "db", "flush_ms": flush_ms}] if flush_ms else []
    return RunFigures(
        id=id_, position=id_, round=0, threads=1,
        settings={"innodb_flush_log_at_trx_commit": flush}, axis_options={}, status="done",
        summary={"tps": tps, "latency_avg_ms": latency_ms},
        counters={"deltas": deltas, "derived": {"transactions": transactions}},
        host_summary={"hosts": hosts},
    )  # fmt: skip


def side(label, runs) -> Any:
    return why.side_figures(label, runs)


def test_the_issue_example_is_explained_by_the_log_fsyncs():
    # flush=1: 1.0 fsync/trx x 0.16 ms of 0.28 ms per transaction; flush=0: no fsync.
    slow = side("flush=1", [run(1, "1", 3571, 0.28, 1.0, 0.16e9 * 500, 500)])
    fast = side("flush=0", [run(2, "0", 7857, 0.12, 0.0)])

    answer = why.explain(slow, fast, threads=1)

    assert answer.latency_ms == pytest.approx(0.16)
    assert answer.predicted == pytest.approx(0.28 / 0.12)
    assert answer.measured == pytest.approx(2.2, abs=0.01)
    assert answer.explained is True
    assert answer.text == (
        "flush=1: redo log 1.00/trx × 0.160 ms (performance_schema) ≈ 0.160 ms of 0.280 ms "
        "per transaction "
        "→ model predicts 2.3× faster, measured 2.2× faster"
    )
    assert slow.binlog_bytes == pytest.approx(300.0)


def test_a_difference_the_fsyncs_do_not_explain_is_called_so():
    # 0.14 ms per redo-log fsync cannot make 0.31 ms out of 0.08.
    slow = side("flush=1", [run(1, "1", 3167, 0.31, 1.01, 0.14e9 * 90, 90)])
    fast = side("flush=0", [run(2, "0", 12210, 0.08, 0.0)])

    answer = why.explain(fast, slow, threads=1)

    assert answer.explained is False
    assert answer.text.endswith(
        "the fsyncs do not explain the difference (something else costs time)"
    )
    assert "model predicts 2.8× slower, measured 3.9× slower" in answer.text


def test_the_data_files_timer_never_times_the_redo_logs_fsyncs():
    # Recorded by the end-to-end test on MariaDB 10.11: performance_schema timed 90 data-file
    # syncs at 0.14 ms and has no redo-log row. Before, 0.14 ms was applied to the redo log's
    # 1.01 fsyncs per transaction and "the fsyncs do not explain the difference" followed.
    slow = side("flush=1", [run(1, "1", 3167, 0.31, 1.01, 0.14e9 * 90, 90, timer="data_file")])
    fast = side("flush=0", [run(2, "0", 12210, 0.08, 0.0)])

    answer = why.explain(fast, slow, threads=1)

    assert slow.by_class.get("redo").ms is None  # not the data files' 0.14 ms
    assert slow.by_class.get("data").ms == pytest.approx(0.14)
    assert answer.predicted is None
    assert answer.text.endswith("the difference would need 0.228 ms per fsync")


def test_the_hosts_device_time_is_a_lower_bound_and_said_so():
    slow = side("flush=1", [run(1, "1", 3167, 0.31, 1.01, flush_ms=0.044)])
    fast = side("flush=0", [run(2, "0", 12210, 0.08, 0.0, flush_ms=0.05)])

    answer = why.explain(fast, slow, threads=1)

    assert slow.by_class.get("redo").to_dict() == {
        "per_tx": pytest.approx(1.01), "ms": 0.044, "source": "/proc/diskstats",
        "lower_bound": True, "low_ms": 0.044, "high_ms": None,  # no bound above
    }  # fmt: skip
    # a bound allows any time above it: 3.9x slower is within what it allows
    assert answer.lower_bound is True and answer.explained is True
    assert answer.prediction is not None and answer.prediction.low == 0.0
    assert answer.prediction.direction == "slower"
    assert "redo log 1.01/trx × ≥ 0.044 ms (/proc/diskstats)" in answer.text
    assert "only a lower bound of an fsync's time" in answer.text
    assert answer.text.endswith("the difference would need 0.228 ms per fsync")


def test_a_cell_shows_one_time_per_fsync_class_in_every_pair():
    # The issue's page: one baseline cell shown at 1.838, 0.241 and 1.539 ms, as each pair
    # took the time of whichever side fsynced more. Each cell now keeps its own per class.
    binlog = {"pfs_binlog_syncs": 10_000.0, "pfs_binlog_sync_ps": 1.8e9 * 10_000}
    base = side("flush=1 sb=0", [run(1, "1", 1500, 0.67, 1.0, 0.26e9 * 9000, 9000)])
    synced = side("flush=1 sb=1", [run(2, "1", 130, 7.6, 1.0, 3.0e9 * 9000, 9000, extra=binlog)])
    lazy = side("flush=2 sb=0", [run(3, "2", 2000, 0.49, 0.001)])

    first, second = why.explain(base, synced, 1), why.explain(base, lazy, 1)

    said = "flush=1 sb=0: redo log 1.00/trx × 0.260 ms (performance_schema)"
    assert said in first.text and said in second.text
    assert "binary log 1.00/trx × 1.800 ms (performance_schema)" in first.text
    assert second.explained is True  # 0.67 - 0.26 = 0.41 ms predicted, 0.49 measured


def test_without_a_measured_latency_it_says_what_latency_would_explain_it():
    slow = side("flush=1", [run(1, "1", 3571, 0.28, 1.0)])
    fast = side("flush=0", [run(2, "0", 7857, 0.12, 0.0)])

    answer = why.explain(fast, slow, threads=1)

    assert answer.predicted is None and answer.explained is None
    assert "fsync latency was not measured" in answer.text
    assert answer.text.endswith("the difference would need 0.160 ms per fsync")


def test_runs_without_counters_give_no_pair():
    bare = RunFigures(id=1, position=0, round=0, threads=1, settings={}, axis_options={},
                      status="done", summary={"tps": 100.0})  # fmt: skip
    assert side("x", [bare]) is None
    assert why.pairs({"a": {1: [bare]}, "b": {1: [bare]}}, {"a": "a", "b": "b"}, "a") == []


def test_pairs_are_each_series_cell_explained_against_the_baselines():
    # the baseline's cells are modelled once for every series: the answers stay those of
    # side_figures and explain, pair by pair; a cell without fsync counters gives none
    def cell(flush, threads, fsyncs, *ids):
        return [replace(run(i, flush, 3000 + 40 * i, 0.3, fsyncs, 0.14e9 * 90, 90), threads=threads)
                for i in ids]  # fmt: skip

    bare = replace(cell("0", 2, 0.0, 9)[0], counters={"derived": {"transactions": 1.0}})
    cells = {
        "base": {1: cell("1", 1, 1.0, 1, 2), 2: cell("1", 2, 1.0, 3, 4)},
        "two": {1: cell("2", 1, 0.5, 5, 6), 2: cell("2", 2, 0.5, 7, 8)},
        "zero": {1: cell("0", 1, 0.1, 10, 11), 2: [bare], 4: cell("0", 4, 0.1, 12)},
    }
    labels = {"base": "flush=1", "two": "flush=2", "zero": "flush=0"}

    found = why.pairs(cells, labels, "base")

    expected = [
        why.explain(side(labels["base"], cells["base"][t]), side(labels[k], cells[k][t]), t)
        for k, t in (("two", 1), ("two", 2), ("zero", 1))
    ]
    assert len(found) == 3
    assert [w.to_dict() for w in found] == [w.to_dict() for w in expected]


def probed(id_, flush, tps, latency_ms, fsyncs, probe_ms, runq):
    """A run whose redo log the sync probe timed, on a server host of 2 cores with a run
    queue of `runq` (bench/results/fsync_sources.json's figures)."""
    figures = run(id_, flush, tps, latency_ms, fsyncs)
    server = {"role": "server", "host": "db", "ncpu": 2, "runq": runq,
              "sync_probe": {"ms": probe_ms, "samples": 40}}  # fmt: skip
    return RunFigures(**{**figures.__dict__, "host_summary": {"hosts": [server]}})


def test_the_probes_time_on_a_host_busier_than_its_cores_is_said_to_be_the_disks():
    # flush=1 at 5.0 runnable on 2 cores: the probe 0.157 ms, the server's syncs far longer
    slow = side("flush=1", [probed(1, "1", 300, 3.312, 1.0, 0.157, runq=5.0)])
    fast = side("flush=2", [probed(2, "2", 1900, 0.523, 0.0, 0.157, runq=5.0)])

    answer = why.explain(slow, fast, threads=1)

    assert "redo log 1.00/trx × 0.157 ms (sync probe)" in answer.text
    assert (
        "(the server host's run queue (5.0) was above its 2 cores: the sync probe's time is "
        "the disk's, the server's own syncs likely waited longer for a CPU)" in answer.text
    )
    assert answer.explained is False
    quiet = side("flush=1", [probed(3, "1", 3500, 0.33, 1.0, 0.157, runq=1.7)])
    calm = side("flush=2", [probed(4, "2", 5500, 0.21, 0.0, 0.157, runq=1.7)])
    assert "run queue" not in why.explain(quiet, calm, threads=1).text


def direct(id_, flush, tps, fsyncs, writes, mode="direct"):
    """A run at full speed on MariaDB 10.11 whose redo log is written with O_DIRECT: its
    fsyncs and Innodb_log_writes per transaction, the sync probe's syncs and writes after a
    pause and in a stream (bench/results/fsync_model.json, a quiet machine)."""
    figures = run(id_, flush, tps, 1000 / tps, fsyncs, transactions=60_000)
    counters = {
        "deltas": {**figures.counters["deltas"], "Innodb_log_writes": writes * 60_000},
        "derived": {"transactions": 60_000, "busy": 0.99},
        "duration_s": 10.0,
    }
    probe = {"ms": 0.10, "streamed_ms": 0.041, "write_ms": 0.11, "streamed_write_ms": 0.042,
             "mode": mode, "samples": 48}  # fmt: skip
    server = {"role": "server", "host": "db", "ncpu": 2, "runq": 1.5, "sync_probe": probe}
    return RunFigures(
        **{**figures.__dict__, "counters": counters, "host_summary": {"hosts": [server]}}
    )


def test_a_direct_log_write_more_costs_what_the_sync_it_replaces_saved():
    # flush=1: one write and one sync a transaction; flush=2: two writes and no sync
    slow = side("flush=1", [direct(1, "1", 5750, 1.0, 1.0)])
    fast = side("flush=2", [direct(2, "2", 6200, 0.0, 2.0)])

    answer = why.explain(slow, fast, threads=1)

    # at full speed the streamed figures: 0.041 + 0.042 ms out, 2 x 0.042 ms in
    assert slow.by_class.get("redo").ms == pytest.approx(0.041)
    assert slow.log_writes.to_dict() == {
        "per_tx": 1.0, "ms": pytest.approx(0.042), "source": "sync probe", "lower_bound": False,
        # the probe's error against strace (25 %) either way: its samples gave no spread
        "low_ms": pytest.approx(0.042 / 1.25), "high_ms": pytest.approx(0.042 * 1.25),
    }  # fmt: skip
    assert answer.predicted == pytest.approx(0.174 / (0.174 - 0.083 + 0.084), rel=0.01)
    assert answer.explained is True
    assert "redo log direct writes 2.00/trx × 0.042 ms (sync probe)" in answer.text

    # a log written through the page cache: its writes wait for nothing, and are left out
    buffered = side("flush=1", [direct(3, "1", 5750, 1.0, 1.0, mode="buffered")])
    cached = side("flush=2", [direct(4, "2", 6200, 0.0, 2.0, mode="buffered")])
    assert buffered.log_writes.cost_ms is None
    assert why.explain(buffered, cached, threads=1).predicted == pytest.approx(
        0.174 / (0.174 - 0.041), rel=0.01
    )
