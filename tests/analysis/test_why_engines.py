# ruff: noqa: RUF001  (the times sign is what people read in the model's sentence)
"""The why panel names each file class as its engine does and lists no class the engine
lacks: on counters recorded on a private PostgreSQL 15 (bench/capture_pg_counters.py:
oltp_insert, one thread, 2 s, synchronous_commit on and off x 2, track_wal_io_timing on)
and on a private MariaDB 10.11 (tests/fixtures/recorded/budget_insert.json, binary logging
on, recorded before the sampler kept the engine)."""

from __future__ import annotations

import json
from pathlib import Path

from django.template.loader import render_to_string

from runs.analysis.results import RunFigures
from runs.analysis.why import panel as why
from runs.columns import RunCounters

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded"


def postgres_cell(commit: str) -> list[RunFigures]:
    runs = json.loads((RECORDED / "why_postgres.json").read_text())
    return [
        RunFigures(
            id=i, position=i, round=r["repeat"] - 1, threads=1,
            settings={"synchronous_commit": commit}, axis_options={}, status="done",
            summary={"tps": r["tps"], "latency_avg_ms": r["latency_avg_ms"]},
            counters=r["counters"],
        )
        for i, r in enumerate(runs)
        if r["synchronous_commit"] == commit
    ]  # fmt: skip


def mariadb_cell(flush: str, sync_binlog: str) -> list[RunFigures]:
    runs = json.loads((RECORDED / "budget_insert.json").read_text())
    return [
        RunFigures(
            id=i, position=i, round=r["repeat"] - 1, threads=1,
            settings={"innodb_flush_log_at_trx_commit": flush, "sync_binlog": sync_binlog},
            axis_options={}, status="done",
            summary={"tps": r["tps"], "latency_avg_ms": r["latency_avg_ms"]},
            counters=r["counters"], host_summary=r["host_summary"],
        )
        for i, r in enumerate(runs)
        if (r["flush"], r["sync_binlog"]) == (flush, sync_binlog)
    ]  # fmt: skip


def postgres_pair() -> why.Why:
    on = why.side_figures("synchronous_commit=on", postgres_cell("on"))
    off = why.side_figures("synchronous_commit=off", postgres_cell("off"))
    assert on is not None and off is not None
    return why.explain(on, off, threads=1)


def mariadb_pair() -> why.Why:
    synced = why.side_figures("flush=1 sync_binlog=1", mariadb_cell("1", "1"))
    lazy = why.side_figures("flush=0 sync_binlog=0", mariadb_cell("0", "0"))
    assert synced is not None and lazy is not None
    return why.explain(synced, lazy, threads=1)


def test_postgresql_counters_name_the_wal_and_list_no_binary_log():
    pair = postgres_pair()

    assert pair.base.by_class.names == ["wal", "data"]
    assert pair.fsyncs_moved == (
        "synchronous_commit=off makes 0.00 WAL fsyncs per transaction against 1.00"
    )
    assert pair.text.startswith("synchronous_commit=on: WAL 1.00/trx × 1.414 ms (pg_stat_wal)")
    for said in (pair.text, pair.fsyncs_moved, pair.moved):
        assert "redo" not in said and "binary log" not in said and "binlog" not in said


def test_the_apis_why_lists_no_binlog_class_or_line_for_postgresql():
    found = postgres_pair().to_dict()

    for side in (found["base"], found["other"]):
        assert list(side["fsyncs_by_class"]) == ["wal", "data"]
        assert side["log_name"] == "WAL"
        assert not [k for k in side if "binlog" in k]
        assert not [k for k in side["budget"] if "binlog" in k]
    assert "binlog" not in json.dumps(found) and "binary log" not in json.dumps(found)


def test_mariadb_counters_name_the_redo_log_and_the_binary_log():
    pair = mariadb_pair()

    assert pair.base.by_class.names == ["redo", "binlog", "data"]
    assert pair.fsyncs_moved == (
        "flush=0 sync_binlog=0 makes 0.00 redo log fsyncs per transaction against 1.00; "
        "0.00 binary log fsyncs against 1.00"
    )
    found = pair.to_dict()
    assert list(found["base"]["fsyncs_by_class"]) == ["redo", "binlog", "data"]
    assert found["base"]["log_name"] == "redo log"
    assert found["base"]["budget"]["binlog_bytes"] > 0
    assert "WAL" not in pair.text + pair.fsyncs_moved


def test_the_engine_is_the_samplers_else_told_by_the_counters_names():
    postgres = json.loads((RECORDED / "why_postgres.json").read_text())[0]["counters"]
    mariadb = json.loads((RECORDED / "budget_insert.json").read_text())[0]["counters"]
    older = {k: v for k, v in postgres.items() if k != "engine"}

    assert RunCounters.load(postgres).engine == "postgresql"
    assert RunCounters.load(older).engine == "postgresql"  # wal_*, db_*: pg_stat_* only
    assert RunCounters.load(mariadb).engine == "mysql"  # Innodb_*, Binlog_*
    assert RunCounters.load({**mariadb, "engine": "mariadb"}).engine == "mariadb"
    assert RunCounters.load({}).engine == ""


def test_the_panel_shows_no_binary_log_row_for_postgresql():
    page = render_to_string(
        "runs/_results_why.html", {"results": {"why": [postgres_pair().to_dict()]}}
    )

    assert "WAL 1.00/trx" in page and "WAL 414" in page
    assert "binary log" not in page.split('<p class="help">')[0]
    assert "redo log" not in page.split('<p class="help">')[0]


def test_the_panel_shows_the_binary_log_for_mariadb():
    page = render_to_string(
        "runs/_results_why.html", {"results": {"why": [mariadb_pair().to_dict()]}}
    )

    table = page.split('<p class="help">')[0]
    assert "redo log" in table and "binary log" in table and "bytes written, binary log" in table
