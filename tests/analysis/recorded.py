"""Runs recorded on a private MariaDB (tests/fixtures/recorded/, sysbench 1.0.20 on a busy
2-core machine), read back through the real parser and summary as the pages see them.

oltp_insert, 3 s, 1/2/4 threads x innodb_flush_log_at_trx_commit 0/1 x 3 repeats,
interleaved; oltp_point_select at 2 threads and --rate 1,000 to 32,000; two 12 s
oltp_point_select runs of the same cell."""

from __future__ import annotations

import json
from pathlib import Path

from runs.analysis.results import RunFigures
from runs.analysis.summary import summarise
from runs.sysbench.parser import parse_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "recorded"
_ids = iter(range(1, 100_000))


def figures(name: str, *, threads: int, settings=None, options=None, round_=0, status="done"):
    """The run of a recorded output, as RunFigures."""
    result = parse_text((FIXTURES / f"{name}.txt").read_text(), exit_code=0)
    key = json.dumps(
        {"options": options or {}, "settings": settings or {}, "threads": threads}, sort_keys=True
    )

    class Row:  # the fields RunFigures.of reads from a Run
        pk = next(_ids)
        position = pk
        round = round_
        cell_key = key
        summary = summarise(result, warmup_s=0)
        counters: dict = {}
        host_summary: dict = {}
        bottleneck: dict = {}
        started_at = finished_at = None
        error = ""
        threads: int
        settings: dict
        status: str

    row = Row()
    row.threads = threads
    row.settings = settings or {}
    row.status = status
    return RunFigures.of(row)


def insert(flush: int, threads: int, repeat: int) -> RunFigures:
    return figures(
        f"insert_f{flush}_t{threads}_r{repeat}",
        threads=threads,
        settings={"innodb_flush_log_at_trx_commit": str(flush)},
        round_=repeat - 1,
    )


def insert_cell(flush: int, threads: int) -> list[RunFigures]:
    return [insert(flush, threads, r) for r in (1, 2, 3)]


def point_select_at(rate: int) -> RunFigures:
    return figures(f"point_rate{rate}", threads=2, options={"rate": str(rate)})


RATES = (1000, 2000, 4000, 8000, 16000, 24000, 28000, 32000)
