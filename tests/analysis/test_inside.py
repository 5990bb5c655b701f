"""The server's own accounting of a run, on snapshots recorded from a private MariaDB 10.11
(performance_schema on; oltp_insert, 1 thread, sync_binlog 0 then 1) and a private
PostgreSQL 15 (2 threads, without then with pg_stat_statements; waits sampled every 0.1 s)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from runs.analysis.results import RunFigures
from runs.analysis.why import inside
from runs.analysis.why import panel as why
from tests.analysis.recorded import FIXTURES

RECORDED = json.loads((FIXTURES / "inside_runs.json").read_text())


def summary(name: str) -> dict:
    run = RECORDED[name]
    return inside.inside_summary(
        run["raw"], transactions=run["transactions"], duration_s=run["duration_s"]
    )


def run_with(name: str, *, run_id: int, sync: str) -> RunFigures:
    return RunFigures(
        id=run_id, position=run_id, round=0, threads=1, settings={"sync_binlog": sync},
        axis_options={}, status="done", summary={}, counters={"inside": summary(name)},
    )  # fmt: skip


def test_the_wait_summaries_deltas_are_per_transaction_with_their_source():
    on = summary("mariadb_sync_binlog_1")
    binlog = next(w for w in on["waits"] if w["event"] == "wait/io/file/sql/binlog")
    raw = RECORDED["mariadb_sync_binlog_1"]["raw"]
    count = raw["last"]["waits"]["wait/io/file/sql/binlog"][0]
    count -= raw["first"]["waits"]["wait/io/file/sql/binlog"][0]
    assert on["waits_source"] == "performance_schema"
    assert binlog["count"] == count
    assert binlog["per_tx"] == pytest.approx(count / on["transactions"], abs=1e-4)
    assert binlog["ms_per_tx"] == pytest.approx(binlog["ms"] / on["transactions"], abs=1e-4)
    assert binlog["label"] == "binary log file I/O (writes and syncs)"
    assert [w["ms"] for w in on["waits"]] == sorted((w["ms"] for w in on["waits"]), reverse=True)


def test_each_digest_has_calls_total_and_mean_latency_and_rows_per_call():
    on = summary("mariadb_sync_binlog_1")
    insert = on["digests"][0]
    assert insert["text"].startswith("INSERT INTO `sbtest1`")
    assert insert["calls"] == on["transactions"]  # one insert per transaction
    assert insert["mean_ms"] == pytest.approx(insert["total_ms"] / insert["calls"], abs=1e-4)
    assert insert["rows_examined_per_call"] == 0.0 and insert["rows_sent_per_call"] == 0.0
    own = [d for d in on["digests"] if "performance_schema" in d["text"].lower()]
    assert own == []  # the sampler's own statements are not the benchmark's


def test_what_moved_between_sync_binlog_0_and_1_is_the_binary_logs_wait():
    base = inside.cell_waits([summary("mariadb_sync_binlog_0")])
    other = inside.cell_waits([summary("mariadb_sync_binlog_1")])

    sentence = inside.moved("sync_binlog=1", base, other)

    change = other["wait/io/file/sql/binlog"] - base["wait/io/file/sql/binlog"]
    assert change > 1.0  # ms per transaction: an fsync of the binary log per commit
    assert sentence.startswith(
        f"sync_binlog=1: {change:+.2f} ms of binary log file I/O (writes and syncs) wait per "
        "transaction"
    )
    assert (
        inside.moved("same", base, base)
        == "same: no wait moved per transaction (by 0.02 ms or more)"
    )


def test_the_why_pair_and_compare_say_what_moved_inside():
    base = [run_with("mariadb_sync_binlog_0", run_id=1, sync="0")]
    other = [run_with("mariadb_sync_binlog_1", run_id=2, sync="1")]
    base = [dataclasses.replace(r, summary={"tps": 100.0, "latency_avg_ms": 5.0}) for r in base]
    other = [dataclasses.replace(r, summary={"tps": 50.0, "latency_avg_ms": 10.0}) for r in other]
    sides = (why.side_figures("sync_binlog=0", base), why.side_figures("sync_binlog=1", other))
    assert sides[0] is not None and sides[1] is not None

    pair = why.explain(sides[0], sides[1], threads=1)
    rows = inside.cells_moved(base, other, "b2")

    assert "ms of binary log file I/O (writes and syncs) wait" in pair.to_dict()["waits_moved"]
    assert rows == [{"label": "sync_binlog=1", "threads": 1, "moved": rows[0]["moved"]}]
    assert rows[0]["moved"].startswith("b2 sync_binlog=1: +")


def test_postgres_sampled_waits_become_time_per_transaction():
    run = RECORDED["postgres_without_statements"]
    profile = run["raw"]["waits"]
    result = summary("postgres_without_statements")

    assert result["waits_source"] == f"sampled every {profile['interval_s']} s"
    assert "digests" not in result and not result["readable"]["readable"]
    assert "CREATE EXTENSION pg_stat_statements" in inside.unreadable(result)
    for wait in result["waits"]:
        seen = profile["waits"][wait["event"]]
        sessions = seen / profile["samples"]
        assert wait["sessions"] == pytest.approx(sessions, abs=1e-3)
        expected = sessions * run["duration_s"] * 1000 / run["transactions"]
        assert wait["ms_per_tx"] == pytest.approx(expected, rel=1e-3)


def test_postgres_digests_come_from_pg_stat_statements_with_blocks_per_call():
    result = summary("postgres_with_statements")
    insert = next(d for d in result["digests"] if d["text"].startswith("INSERT"))
    assert result["readable"]["readable"]
    assert insert["rows_sent_per_call"] == 1.0 and insert["blocks_per_call"] > 0
    assert insert["calls"] == pytest.approx(result["transactions"], rel=0.1)
    assert not any("pg_stat" in d["text"].lower() for d in result["digests"])


def test_a_run_without_snapshots_says_why_and_has_nothing_else():
    raw = {"readable": {"readable": False, "reason": "performance_schema is off", "fix": "x"}}
    result = inside.inside_summary(raw, transactions=10)
    assert result == {"readable": raw["readable"], "transactions": 10}
    assert inside.unreadable(result) == "performance_schema is off; to read them: x"
    assert inside.cell_waits([result, None]) == {}
    assert inside.moved("x", {}, {"a": 1.0}) == ""
