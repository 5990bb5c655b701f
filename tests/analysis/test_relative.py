"""The relative table on recorded runs (tests/analysis/recorded.py): oltp_insert at 1, 2
and 4 threads x innodb_flush_log_at_trx_commit 0/1 x 3 repeats, and the oltp_point_select
grid at 2, 3 and 4 threads x 3 rounds, as the rows of a tests axis; the flush values as a
setting's columns, and as two servers' columns (issue 33's servers table)."""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any

import pytest

from runs.analysis import relative
from runs.analysis.noise import verdicts
from runs.analysis.relative import SERVER, TableRun, relative_table
from runs.errors import InvalidInput
from tests.analysis.recorded import insert_cell, point_select_threads

HOSTS = {"hosts": [{"role": "server", "host": "db", "db": {"cpu_us_per_tx": 80.0,
         "csw_per_tx": 6.0}, "read_kb_per_tx": 0.5, "write_kb_per_tx": 12.0}]}  # fmt: skip


def made(runs: list[TableRun], **given: Any) -> Any:
    table = relative_table(runs, **given)
    assert table is not None
    return table


def insert_runs(*, as_servers: bool = False) -> list[TableRun]:
    runs = []
    for flush in (1, 0):  # the plan's order: flush=1 first, the baseline
        for threads in (1, 2, 4):
            for figures in insert_cell(flush, threads):
                server = {"target": f"flush{flush}"} if as_servers else {}
                if as_servers:  # the target among the axis values, as run_axes reads a run
                    figures = dataclasses.replace(figures, settings={}, axis_options=server)
                runs.append(TableRun(figures, "insert", "write", 1, server))
    return runs


def test_a_setting_as_columns_gives_each_row_its_ratio_interval_and_verdict():
    table = made(insert_runs(), orders={"innodb_flush_log_at_trx_commit": ["1", "0"]})
    assert table is not None
    assert table.axis == "innodb_flush_log_at_trx_commit"
    assert table.columns == ["flush=1", "flush=0"]
    (family,) = table.families
    assert [r.label for r in family.rows] == ["insert threads=1", "insert threads=2",
                                               "insert threads=4"]  # fmt: skip
    for row, threads in zip(family.rows, (1, 2, 4), strict=True):
        base, other = insert_cell(1, threads), insert_cell(0, threads)
        assert row.cells[0].throughput == pytest.approx(
            statistics.geometric_mean(r.throughput or 0.0 for r in base)
        )
        assert row.cells[0].verdict is None and row.cells[0].n == 3
        verdict = row.cells[1].verdict
        alone = verdicts.compare_runs(base, other)
        assert alone is not None
        assert verdict.ratio == alone.ratio and verdict.low == alone.low
        assert verdict.correction == "Holm's correction over 3 cells"
    # flush=0 does not wait on the log's fsync: faster at every thread count here
    assert all(r.cells[1].verdict.verdict == verdicts.FASTER for r in family.rows)
    assert [m.faster for m in family.moves] == [3]
    assert table.summary.startswith("Against flush=1: write ")
    assert "(3 faster of 3)" in table.summary


def test_the_servers_as_columns_are_issue_33s_table():
    runs = insert_runs(as_servers=True)
    table = made(runs, orders={SERVER: ["flush1", "flush0"]})
    assert table is not None and table.axis == SERVER and table.axes == [SERVER, "threads"]
    assert table.columns == ["flush1", "flush0"]
    same_as_setting = made(insert_runs(), orders={"innodb_flush_log_at_trx_commit": ["1", "0"]})
    for row, twin in zip(table.families[0].rows, same_as_setting.families[0].rows, strict=True):
        assert row.cells[1].verdict == twin.cells[1].verdict
        assert row.cells[1].tone in relative.FASTER_TONES


def test_two_targets_at_one_thread_compare_in_one_row():
    """Issue 47: a plan over two targets, nothing else varying. run_axes names each run's
    target among its axis values; the rows must not, or each row holds one target and the
    second column has nothing to compare with."""
    runs = [r for r in insert_runs(as_servers=True) if r.figures.threads == 1]
    runs = [dataclasses.replace(r, test="", family="", test_order=0) for r in runs]
    table = made(runs, orders={SERVER: ["flush1", "flush0"]})
    assert table.axis == SERVER and table.axes == [SERVER]
    assert table.columns == ["flush1", "flush0"]
    (family,) = table.families
    (row,) = family.rows
    assert row.label == "all runs"
    assert [c.n for c in row.cells] == [3, 3]
    verdict = row.cells[1].verdict
    alone = verdicts.compare_runs(insert_cell(1, 1), insert_cell(0, 1))
    assert verdict is not None and alone is not None
    assert verdict.ratio == alone.ratio and verdict.interval == alone.interval
    assert verdict.verdict == verdicts.FASTER and verdict.significant
    (move,) = family.moves
    assert move.ratio == alone.ratio and move.faster == 1
    assert "nothing to compare" not in table.summary
    assert table.summary.startswith("Against flush1: cells ")


def test_servers_over_targets_and_configs_are_one_column_each():
    """Two server axes (a target and a config, both among the run's axis values) make one
    column per pair; a setting that varies too stays in the rows."""
    runs = []
    for flush in (1, 0):
        for config in ("a", "b"):
            for figures in insert_cell(flush, 2):
                server = {"target": "db1", "config": config}
                options = {**server, "range_size": "100"}
                runs.append(TableRun(dataclasses.replace(figures, axis_options=options),
                                     "insert", "write", 1, server))  # fmt: skip
    table = made(runs, orders={SERVER: ["target=db1 config=b", "target=db1 config=a"]})
    assert table.axis == SERVER
    assert table.axes == [SERVER, "innodb_flush_log_at_trx_commit"]
    assert table.columns == ["target=db1 config=b", "target=db1 config=a"]
    rows = table.families[0].rows
    assert [r.label for r in rows] == ["insert flush=0", "insert flush=1"]
    for row in rows:  # the same runs on both sides of each row
        assert row.cells[1].verdict.verdict == verdicts.SAME
    by_flush = made(runs, axis="innodb_flush_log_at_trx_commit")
    assert [r.label for r in by_flush.families[0].rows] == [
        "insert target=db1 config=a", "insert target=db1 config=b"]  # fmt: skip


def test_threads_as_columns_read_against_the_first_thread_count():
    table = made(insert_runs(), axis="threads")
    assert table.columns == ["threads=1", "threads=2", "threads=4"]
    assert [r.label for r in table.families[0].rows] == ["insert flush=0", "insert flush=1"]


def test_tests_in_families_with_per_transaction_costs_from_the_host_metrics():
    runs = [
        dataclasses.replace(r, family="write", test="insert", test_order=1)
        for r in insert_runs()
        if r.figures.threads == 2
    ]
    # the point_select grid at 2 threads as a second test, its rounds as both settings
    for flush in ("1", "0"):
        for round_ in (1, 2, 3):
            figures = dataclasses.replace(
                point_select_threads(2, round_),
                settings={"innodb_flush_log_at_trx_commit": flush},
                host_summary=HOSTS,
            )
            runs.append(TableRun(figures, "point-select", "point", 0))
    table = made(runs, orders={"innodb_flush_log_at_trx_commit": ["1", "0"]})
    assert [f.name for f in table.families] == ["point", "write"]
    point = table.families[0].rows[0]
    assert point.label == "point-select"
    assert point.cells[0].per_tx.to_dict() == {"cpu_us": 80.0, "csw": 6.0, "read_kb": 0.5,
                                               "write_kb": 12.0, "io_source": "machine's disks",
                                               "io_why": ""}  # fmt: skip
    # the same runs on both sides: no difference, grey
    assert point.cells[1].verdict.verdict == verdicts.SAME
    assert point.cells[1].tone == relative.SAME_TONE
    # each family corrected on its own
    assert point.cells[1].verdict.correction == "Holm's correction over 1 cell"
    assert "No significant change against flush=1: point (1 tested)." in table.summary
    csv = table.csv_rows()
    assert csv[0] == list(relative.CSV_HEADER)
    assert csv[1][:4] == ["point", "point-select", "flush=1", 3]
    assert csv[1][9] == "baseline" and csv[2][9] == verdicts.SAME


def test_nothing_to_compare_gives_no_table():
    one_cell = [r for r in insert_runs() if r.figures.threads == 1
                and r.figures.settings["innodb_flush_log_at_trx_commit"] == "1"]  # fmt: skip
    assert relative_table(one_cell) is None


def test_the_colour_deepens_with_the_difference():
    faster = verdicts.Verdict(verdicts.FASTER, 3, 3, ratio=1.5, p_value=0.001)
    slower = verdicts.Verdict(verdicts.SLOWER, 3, 3, ratio=0.97, p_value=0.001)
    assert relative.tone(faster) == relative.FASTER_TONES[3]
    assert relative.tone(slower) == relative.SLOWER_TONES[0]
    assert relative.tone(None) == ""


def test_an_axis_the_runs_do_not_vary_is_refused_naming_those_they_do():
    """Issue 48: `server` on runs whose servers do not vary gave the first axis's table."""
    runs = insert_runs()
    for asked in ("server", "range_size"):
        with pytest.raises(InvalidInput) as refused:
            relative_table(runs, axis=asked)
        assert refused.value.field == "axis"
        assert asked in refused.value.message
        assert "innodb_flush_log_at_trx_commit, threads" in refused.value.message
    # a setting by the short name its columns show is the setting
    assert made(runs, axis="flush").axis == "innodb_flush_log_at_trx_commit"


def _by_cell(runs: list[TableRun]) -> list[list[TableRun]]:
    cells: dict[tuple[str, int], list[TableRun]] = {}
    for run in runs:
        key = (run.figures.settings["innodb_flush_log_at_trx_commit"], run.figures.threads)
        cells.setdefault(key, []).append(run)
    return list(cells.values())


def test_a_family_whose_moves_are_all_the_same_never_reads_an_empty_count():
    """Issue 48: a move with none faster and none slower read `( of 3)`."""
    runs = [dataclasses.replace(r, figures=dataclasses.replace(r.figures, settings={
        "innodb_flush_log_at_trx_commit": "1"}, axis_options={"copy": "a"})) for r in insert_runs()
        if r.figures.settings["innodb_flush_log_at_trx_commit"] == "1"]  # fmt: skip
    copies = [dataclasses.replace(r, figures=dataclasses.replace(r.figures,
              axis_options={"copy": "b"})) for r in runs]  # fmt: skip
    table = made(runs + copies, axis="copy")
    (move,) = table.families[0].moves
    assert (move.faster, move.slower, move.tested) == (0, 0, 3)
    assert "( of" not in move.text and "()" not in move.text
    assert move.text == "write: no significant change with copy=b (3 tested)"
    assert table.summary == "No significant change against copy=a: write (3 tested)."


def test_cells_too_short_to_test_are_not_called_unchanged():
    """Issue 48: single runs too short to be compared on their intervals got the summary's
    "No significant change" and the grey of a tested cell; they were never tested."""
    table = made([runs[0] for runs in _by_cell(insert_runs())], axis="threads")
    (family,) = table.families
    for row in family.rows:
        for cell in row.cells[1:]:
            assert cell.verdict.verdict == verdicts.TOO_FEW
            assert cell.tone == ""  # grey says "tested, no difference"
    assert [(m.tested, m.untested) for m in family.moves] == [(0, 2), (0, 2)]
    assert family.moves[0].text == "write: not tested against threads=2 (2 cells: n=1)"
    assert table.to_dict()["families"][0]["moves"][0]["untested"] == 2
    assert "No significant change" not in table.summary
    assert table.summary == ("Not tested against threads=1 (too few repeats): write.")


def test_per_query_beside_per_transaction_rqps_and_the_costs_a_query():
    """Issue 48: the published comparisons read per operation: each cell's queries a second
    against the baseline's (rQPS) and its costs per query, from the run's summary (qps/tps:
    the queries a transaction) and host summary (the costs a transaction)."""
    runs = []
    for flush, qps_scale in (("1", 1.0), ("0", 1.5)):
        for round_ in (1, 2, 3):
            figures = point_select_threads(2, round_)
            tps = figures.summary["tps"]
            summary = {**figures.summary, "qps": tps * 4 * qps_scale}  # 4 queries a transaction
            runs.append(TableRun(dataclasses.replace(
                figures, summary=summary, settings={"innodb_flush_log_at_trx_commit": flush},
                host_summary=HOSTS), "read-write", "mixed", 0))  # fmt: skip
    table = made(runs, orders={"innodb_flush_log_at_trx_commit": ["1", "0"]})
    base, other = table.families[0].rows[0].cells
    qps = [r.figures.summary["qps"] for r in runs]
    assert base.qps == pytest.approx(statistics.geometric_mean(qps[:3]))
    assert other.qps == pytest.approx(statistics.geometric_mean(qps[3:]))
    assert base.rqps is None and other.rqps == pytest.approx(other.qps / base.qps)
    assert base.per_query.to_dict() == {"cpu_us": 20.0, "csw": 1.5, "read_kb": 0.125,
                                        "write_kb": 3.0, "io_source": "machine's disks",
                                        "io_why": ""}  # fmt: skip
    assert other.per_query.cpu_us == round(80.0 / 6, 3)  # 6 queries a transaction there
    cell = table.to_dict()["families"][0]["rows"][0]["cells"][1]
    assert cell["rqps"] == other.rqps and cell["per_query"]["csw"] == 1.0
    header, first, second = table.csv_rows()
    assert header[-7:] == ["qps", "rqps", "cpu_us_per_query", "csw_per_query",
                           "read_kb_per_query", "write_kb_per_query", "io_source"]  # fmt: skip
    assert first[-6:-1] == [1.0, 20.0, 1.5, 0.125, 3.0] and first[-7] == base.qps
    assert second[-6] == other.rqps


OWN_IO = {"hosts": [{"role": "server", "host": "db", "db": {"cpu_us_per_tx": 80.0,
          "csw_per_tx": 6.0, "read_kb_per_tx": 0.1, "write_kb_per_tx": 3.0},
          "read_kb_per_tx": 0.5, "write_kb_per_tx": 12.0}]}  # fmt: skip
REFUSED = {"hosts": [{"role": "server", "host": "db", "db": {"cpu_us_per_tx": 80.0,
           "io_why": "cannot read /proc/7/io: Permission denied"},
           "read_kb_per_tx": 0.5, "write_kb_per_tx": 12.0}]}  # fmt: skip


def test_read_and_write_kb_are_the_servers_own_where_every_repeat_has_them():
    """Issue 48: the machine's disks carry the neighbours' I/O too: a cell whose repeats
    all read the server's /proc/<pid>/io shows that, one that could not falls back to the
    disks whole, and the table, its JSON and its CSV say which."""
    runs = []
    for flush, summaries in (("1", [OWN_IO] * 3), ("0", [OWN_IO, OWN_IO, REFUSED])):
        for round_, host_summary in zip((1, 2, 3), summaries, strict=True):
            figures = dataclasses.replace(
                point_select_threads(2, round_), host_summary=host_summary,
                settings={"innodb_flush_log_at_trx_commit": flush},
            )  # fmt: skip
            runs.append(TableRun(figures, "insert", "write", 0))
    table = made(runs, orders={"innodb_flush_log_at_trx_commit": ["1", "0"]})
    own, fallback = table.families[0].rows[0].cells
    assert (own.per_tx.write_kb, own.per_tx.read_kb) == (3.0, 0.1)
    assert own.per_tx.io_source == "server process"
    assert (fallback.per_tx.write_kb, fallback.per_tx.io_source) == (12.0, "machine's disks")
    assert fallback.per_tx.io_why == "cannot read /proc/7/io: Permission denied"
    assert table.io_source == "mixed" and table.to_dict()["io_source"] == "mixed"
    header, first, second = table.csv_rows()
    assert header[-1] == "io_source"
    assert (first[-1], second[-1]) == ("server process", "machine's disks")
    own_only = made(runs[:3] + [dataclasses.replace(r, figures=dataclasses.replace(
        r.figures, host_summary=OWN_IO)) for r in runs[3:]])  # fmt: skip
    assert own_only.io_source == "server process"
