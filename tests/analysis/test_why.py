# ruff: noqa: RUF001  (the times sign is what people read in the model's sentence)
"""The why panel's per-transaction time model, on the figures of the issue's example and
of a run of the end-to-end test (MariaDB 10.11, performance_schema timing its data files)."""

from __future__ import annotations

from typing import Any

import pytest

from runs.analysis import why
from runs.analysis.results import RunFigures


def run(id_, flush, tps, latency_ms, fsyncs, sync_ps=0.0, syncs=0.0, transactions=10_000):
    deltas = {
        "Innodb_data_fsyncs": fsyncs * transactions,
        "Binlog_bytes_written": 300.0 * transactions,
    }
    if syncs:
        deltas |= {"pfs_data_file_syncs": syncs, "pfs_data_file_sync_ps": sync_ps}
    return RunFigures(
        id=id_, position=id_, round=0, threads=1,
        settings={"innodb_flush_log_at_trx_commit": flush}, axis_options={}, status="done",
        summary={"tps": tps, "latency_avg_ms": latency_ms},
        counters={"deltas": deltas, "derived": {"transactions": transactions}},
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
        "flush=1: 1.00 fsync/trx × 0.160 ms ≈ 0.160 ms of 0.280 ms per transaction "
        "→ model predicts 2.3× faster, measured 2.2× faster"
    )
    assert slow.binlog_bytes == pytest.approx(300.0)


def test_a_difference_the_fsyncs_do_not_explain_is_called_so():
    # Recorded by the end-to-end test: 0.14 ms per fsync cannot make 0.31 ms out of 0.08.
    slow = side("flush=1", [run(1, "1", 3167, 0.31, 1.01, 0.14e9 * 90, 90)])
    fast = side("flush=0", [run(2, "0", 12210, 0.08, 0.0)])

    answer = why.explain(fast, slow, threads=1)

    assert answer.explained is False
    assert answer.text.endswith(
        "the fsyncs do not explain the difference (something else costs time)"
    )
    assert "model predicts 2.8× slower, measured 3.9× slower" in answer.text


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
