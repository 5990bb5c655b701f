"""Issue 49: one estimator in every table. Batches of recorded runs (tests/analysis/recorded.py)
with every axis kind (a setting, an option, the threads, targets, installs, configs, a tests
axis) built into the main table (its API rows, its HTML rows, its TSV, the peaks and the
scaling chart) and the relative table over each axis it may take as columns (its cells,
API, CSV and HTML rows); every figure shown for a cell is the geometric mean of its repeats,
computed here from the runs, every ratio the ratio of two such figures, and a cell's figure
is the same in both tables. The threads search quotes the peak the tables show. Pure."""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from runs.analysis import batch_results, relative
from runs.analysis.auto import threads as threads_search
from runs.analysis.auto.cells import cell_figures
from runs.analysis.auto.settings import ThreadsAuto
from runs.analysis.relative import TableRun, column_of, relative_table, row_of
from runs.analysis.results import RunFigures
from runs.analysis.series import group_series, plan_order
from runs.sysbench.cells import ServerAxes
from runs.web.templatetags.numbers import num, ratio
from runs.web.templatetags.results_tables import relative_rows, report_table_rows
from tests.analysis.recorded import insert_cell, point_select_threads
from tests.analysis.test_cell_axes import CONFIGS, RECORDED, SERVERS, cells, run_of

FLUSH = "innodb_flush_log_at_trx_commit"


def geomean(values: Sequence[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def as_p99(run: RunFigures) -> RunFigures:
    """The plan asked --percentile=99: the run's latency figure is its p99 (here its p95
    stretched, as recorded runs measured p95)."""
    p99 = (run.latency_ms or 0.0) * 1.7
    return dataclasses.replace(
        run, summary={**run.summary, "latency_pct": 99, "latency_pct_ms": p99}
    )


def insert_grid(relabel: Callable[[RunFigures, int], TableRun]) -> list[TableRun]:
    """oltp_insert at 1, 2 and 4 threads x flush 1 then 0 x 3 repeats, each cell relabelled."""
    return [relabel(r, f) for f in (1, 0) for t in (1, 2, 4) for r in insert_cell(f, t)]


def by_setting(run: RunFigures, flush: int) -> TableRun:
    return TableRun(as_p99(run))


def by_option(run: RunFigures, flush: int) -> TableRun:
    options = {"db-ps-mode": "auto" if flush else "disable"}
    return TableRun(dataclasses.replace(run, settings={}, axis_options=options))


def by_target(run: RunFigures, flush: int) -> TableRun:
    server = {"target": f"db-{'a' if flush else 'b'}"}
    return TableRun(dataclasses.replace(run, settings={}, axis_options=server), server=server)


def by_install(run: RunFigures, flush: int) -> TableRun:
    server = {"install": "11.4" if flush else "10.11"}
    return TableRun(dataclasses.replace(run, settings={}, cell_axes=server), server=server)


def threads_only(run: RunFigures, flush: int) -> TableRun:
    return TableRun(run)


def tests_axis() -> list[TableRun]:
    """Two tests (insert, point select) x flush 1/0 at 2 threads: a row a test."""
    runs = []
    for flush in (1, 0):
        inserts = insert_cell(flush, 2)
        points = [point_select_threads(2 + flush, r) for r in (1, 2, 3)]
        for test, family, order, members in (
            ("insert", "write", 0, inserts), ("point", "point", 1, points)
        ):  # fmt: skip
            for run in members:
                figures = dataclasses.replace(
                    run, threads=2, settings={FLUSH: str(flush)}, cell_axes={"test": test}
                )
                runs.append(TableRun(figures, test=test, family=family, test_order=order))
    return runs


def configs_axis() -> list[TableRun]:
    runs = [run_of(c, *RECORDED[c.config]) for c in cells(servers=ServerAxes(configs=CONFIGS))]
    return [TableRun(r, server={"config": r.cell_axes["config"]}) for r in runs]


ORDERS = {FLUSH: ["1", "0"], "db-ps-mode": ["auto", "disable"], "target": ["db-a", "db-b"],
          "install": ["11.4", "10.11"], "config": list(CONFIGS)}  # fmt: skip
BATCHES: dict[str, tuple[Callable[[], list[TableRun]], dict[str, Any]]] = {
    "setting": (lambda: insert_grid(by_setting),
                {"server_settings": {FLUSH: ["1", "0"]}, "options": {"percentile": 99}}),
    "option": (lambda: insert_grid(by_option),
               {"option_axes": {"db-ps-mode": ["auto", "disable"]}}),
    "targets": (lambda: insert_grid(by_target),
                {"targets": [{"name": "db-a"}, {"name": "db-b"}]}),
    "installs": (lambda: insert_grid(by_install), {"servers": {"installs": ["11.4", "10.11"]}}),
    "threads": (lambda: [r for r in insert_grid(threads_only) if r.figures.settings[FLUSH] == "1"],
                {}),
    "configs": (configs_axis, {"servers": SERVERS}),
    "tests": (tests_axis, {"server_settings": {FLUSH: ["1", "0"]}}),
}  # fmt: skip


def cell_runs(runs: Sequence[RunFigures]) -> dict[tuple[str, int], list[RunFigures]]:
    found: dict[tuple[str, int], list[RunFigures]] = {}
    for run in runs:
        found.setdefault((run.series_key, run.threads), []).append(run)
    return found


def expected(members: Sequence[RunFigures]) -> dict[str, float]:
    """A cell's figures as this test reckons them: the geometric mean of its repeats."""
    return {
        "tps": geomean([r.throughput or 0.0 for r in members]),
        "qps": geomean([r.figures.qps or 0.0 for r in members]),
        "latency": geomean([r.latency_ms or 0.0 for r in members]),
    }


def html_rows(html: str) -> list[list[str]]:
    """Each row's cells as text, the rowspan cells (threads, family) left out."""
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", html, flags=re.S):
        cells = re.findall(r"<td(?![^>]*rowspan)[^>]*>(.*?)</td>", row, flags=re.S)
        rows.append([re.sub(r"<[^>]+>", " ", c).split() for c in cells])
    return [[" ".join(words) for words in row] for row in rows]


def main_table(runs: list[RunFigures], params: dict[str, Any]):
    order = plan_order(params.get("server_settings", {}), params.get("option_axes", {}),
                       params.get("targets", ()), params.get("servers"))  # fmt: skip
    baseline = group_series(runs, order)[0].key
    return batch_results.build(runs, baseline, params)


@pytest.mark.parametrize("kind", list(BATCHES))
def test_the_main_table_shows_the_geometric_mean_of_each_cells_repeats(kind):
    make, params = BATCHES[kind]
    runs = [r.figures for r in make()]
    found = main_table(runs, params)
    pct = "p99" if kind == "setting" else "p95"
    by_cell = {key: expected(members) for key, members in cell_runs(runs).items()}
    assert found.latency_label == pct
    assert found.table_tsv.splitlines()[0].split("\t")[2:5] == [
        "tps (geometric mean of the repeats)", "qps", f"{pct} ms"
    ]  # fmt: skip
    shown = html_rows(report_table_rows(found.table))
    tsv = [line.split("\t") for line in found.table_tsv.splitlines()[1:]]
    assert len(shown) == len(tsv) == len(found.table) == len(by_cell)
    bases = {r["threads"]: r["point"]["mean"] for r in found.table if r["is_baseline"]}
    for row, html, line in zip(found.table, shown, tsv, strict=True):
        point, figures = row["point"], by_cell[(row["series"]["key"], row["threads"])]
        assert point["mean"] == pytest.approx(figures["tps"])  # the API
        assert point["qps"] == pytest.approx(figures["qps"])
        assert point["latency_ms"] == pytest.approx(figures["latency"])
        # the page's and the report's row: label, tps, min-max, qps, latency, errors, ratio
        assert [html[1], html[3], html[4]] == [num(point[k]) for k in ("mean", "qps", "latency_ms")]
        assert line[2:5] == [f"{point[k]:.2f}" for k in ("mean", "qps", "latency_ms")]  # TSV
        if not row["is_baseline"]:
            assert row["ratio"] == pytest.approx(point["mean"] / bases[row["threads"]])
            assert html[6] == ratio(row["ratio"]) and line[6] == f"{row['ratio']:.2f}"
            assert row["verdict"]["ratio"] == pytest.approx(row["ratio"])
    for series, chart in zip(found.series, found.scaling_chart, strict=True):
        means = {p["x"]: p["y"] for p in chart["points"]}
        for p in chart["points"]:
            figures = by_cell[(series["key"], p["x"])]
            assert (p["y"], p["p95"]) == pytest.approx((figures["tps"], figures["latency"]))
        if series["peak"]:
            assert series["peak"]["value"] == max(means.values())  # "peaks at 4 (…)"


@pytest.mark.parametrize("kind", list(BATCHES))
def test_every_relative_table_shows_the_main_tables_figures_and_their_ratios(kind):
    make, params = BATCHES[kind]
    runs = make()
    found = main_table([r.figures for r in runs], params)
    ids = {
        key: frozenset(r.id for r in m) for key, m in cell_runs([r.figures for r in runs]).items()
    }
    main = {ids[(r["series"]["key"], r["threads"])]: r["point"] for r in found.table}
    axes = relative.column_axes(runs)
    assert axes
    for axis in axes:
        table = relative_table(runs, axis=axis, orders=ORDERS)
        assert table is not None
        shown = html_rows(relative_rows(table))
        listed = [r for f in table.to_dict()["families"] for r in f["rows"]]
        csv = table.csv_rows()[1:]
        rows = [row for family in table.families for row in family.rows]
        assert len(shown) == len(listed) == len(rows)
        for row, html, api in zip(rows, shown, listed, strict=True):
            members = [[r for r in runs if column_of(r, axis) == c.column
                        and row_of(r, axis, axes)[1] == row.label] for c in row.cells]  # fmt: skip
            base = row.cells[0]
            for place, (cell, mine) in enumerate(zip(row.cells, members, strict=True)):
                figures = expected([r.figures for r in mine])
                point = main[frozenset(r.figures.id for r in mine)]
                assert cell.throughput == pytest.approx(figures["tps"]) == point["mean"]
                assert cell.qps == pytest.approx(figures["qps"]) == point["qps"]
                assert api["cells"][place]["throughput"] == cell.throughput
                line = next(c for c in csv if c[1] == row.label and c[2] == cell.column)
                assert (line[4], line[15]) == (cell.throughput, cell.qps)
                if place == 0:
                    assert html[1:3] == [num(cell.throughput), num(cell.qps)]
                    continue
                assert cell.verdict is not None
                shares = (cell.throughput or 0) / (base.throughput or 1)
                assert cell.verdict.ratio == pytest.approx(shares)  # 343/303 is the ratio
                assert cell.rqps == pytest.approx((cell.qps or 0) / (base.qps or 1))
                assert line[6] == cell.verdict.ratio and line[16] == cell.rqps
                at = 1 + place * 6
                assert html[at].split()[0] == ratio(cell.verdict.ratio)
                assert html[at + 1] == ratio(cell.rqps)


def test_the_threads_search_quotes_the_peak_the_tables_show():
    runs = [r.figures for r in BATCHES["threads"][0]()]
    points = {t: cell_figures([r for r in runs if r.threads == t]) for t in (1, 2, 4)}
    (series,) = group_series(runs)
    peak = series.peak
    assert peak is not None
    text = threads_search.knee_conclusion(points, ThreadsAuto(max=4), "tps")
    assert text.startswith(f"peak {peak.value:,.0f} tps at {peak.threads} threads (p95 ")
    latency = series.at(peak.threads).latency_ms  # type: ignore[union-attr]
    assert f"(p95 {latency:.2f} ms" in text
    p99 = {t: cell_figures([as_p99(r) for r in runs if r.threads == t]) for t in (1, 2, 4)}
    assert "(p99 " in threads_search.knee_conclusion(p99, ThreadsAuto(max=4), "tps")
