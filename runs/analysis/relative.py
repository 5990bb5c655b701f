"""The relative table: each test's throughput against a baseline, for every compared value.

The form of the published version comparisons: one row per test (grouped by family: point
queries, range queries, range queries with aggregation, writes), or per cell when a plan
has no tests axis; one column per value of the axis compared (the servers: targets,
installs, configs; a setting; an option; the threads); in each cell the throughput
relative to the first column (the baseline) with its 95 % interval and verdict, coloured,
and the cost per transaction that explains it: the database's CPU µs and context switches,
KB read and written (its processes' /proc/<pid>/io, else the disks': host_metrics/); and per
operation, as the published comparisons read: the queries a second against the
baseline's (rQPS) and the same costs per query.

Its statistics are the results' own: a cell's throughput and qps are stats.ESTIMATOR of
its repeats (the main table's), so that a column's figures divide to the ratio beside
them; verdicts.compare_runs for a cell against the baseline's, verdicts.corrected (Holm)
over the cells of one family, the geometric mean's ratio of stats.py for a family's move.
Pure: no Django, no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.analysis.host_metrics.host_summary import (
    PER_TX,
    PerQuery,
    PerTx,
    cell_per_query,
    cell_per_tx,
    io_source_of,
)
from runs.analysis.moves import Move, family_move
from runs.analysis.noise import stats, verdicts
from runs.analysis.noise.verdicts import Verdict
from runs.analysis.percent import signed_pct
from runs.analysis.results import FINISHED_WELL, SHORT_NAMES, RunFigures, throughput_unit
from runs.errors import InvalidInput

SERVER = "server"  # the column axis of the servers: target, install and config together
THREADS = "threads"
CELLS = "cells"  # the one family of a plan without a tests axis
# Diverging shades (ColorBrewer greens and reds), by how far the ratio is from 1: under
# 5 %, 15 %, 40 %, beyond; a cell whose difference is not significant stays grey.
FASTER_TONES = ("#e5f5e0", "#c7e9c0", "#a1d99b", "#74c476")
SLOWER_TONES = ("#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a")
SAME_TONE = "#f0f0f0"
_LEVELS = (1.05, 1.15, 1.40)


@dataclass(frozen=True)
class TableRun:
    """A run with what the table needs beyond its figures: its test's item (a tests axis)
    and the server axes of the plan that vary (target name, install, config)."""

    figures: RunFigures
    test: str = ""  # the item's label; "" without a tests axis
    family: str = ""
    test_order: int = 0  # the item's place in the plan
    server: Mapping[str, str] = field(default_factory=dict)

    @property
    def options(self) -> dict[str, str]:
        """The run's option-axis values without its server's: run_axes names the target
        (and the install, the config) among them, but here they are the server column, so
        a row that named them too would hold one server only, with nothing to compare."""
        return {k: v for k, v in self.figures.axis_options.items() if k not in self.server}


@dataclass(frozen=True)
class TableCell:
    column: str
    n: int  # finished repeats
    throughput: float | None  # stats.ESTIMATOR of theirs: the verdict's ratio is of two
    verdict: Verdict | None  # against the baseline's cell; None in the baseline's column
    per_tx: PerTx
    qps: float | None = None  # stats.ESTIMATOR of the repeats' queries a second
    rqps: float | None = None  # its ratio to the baseline's; None there
    per_query: PerQuery = field(default_factory=PerQuery)

    @property
    def tone(self) -> str:
        return tone(self.verdict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "n": self.n,
            "throughput": self.throughput,
            "verdict": self.verdict.to_dict() if self.verdict else None,
            "tone": self.tone,
            "per_tx": self.per_tx.to_dict(),
            "qps": self.qps,
            "rqps": self.rqps,
            "per_query": self.per_query.to_dict(),
        }


@dataclass(frozen=True)
class Row:
    label: str
    test: str
    family: str
    cells: list[TableCell]


@dataclass(frozen=True)
class Family:
    name: str
    rows: list[Row]
    moves: list[Move]  # one per column but the baseline's

    @property
    def tested(self) -> bool:
        return any(m.tested for m in self.moves)


@dataclass(frozen=True)
class RelativeTable:
    axis: str  # the column axis: SERVER, THREADS, a setting's or an option's name
    axes: list[str]  # the axes a reader may choose as columns
    columns: list[str]  # the first is the baseline
    families: list[Family]
    unit: str

    @property
    def baseline(self) -> str:
        return self.columns[0]

    @property
    def summary(self) -> str:
        """Which families moved, and by how much, against the baseline."""
        moved = [m.text for f in self.families for m in f.moves if m.moved]
        still = [f for f in self.families if not any(m.moved for m in f.moves)]
        quiet = [f"{f.name} ({sum(m.tested for m in f.moves)} tested)" for f in still if f.tested]
        untested = [f.name for f in still if not f.tested and any(m.untested for m in f.moves)]
        parts = []
        if moved:
            parts.append(f"Against {self.baseline}: " + "; ".join(moved) + ".")
        if quiet:
            parts.append(f"No significant change against {self.baseline}: {', '.join(quiet)}.")
        if untested:
            parts.append(
                f"Not tested against {self.baseline} (too few repeats): {', '.join(untested)}."
            )
        return " ".join(parts)

    @property
    def io_source(self) -> str:
        """Where its KB read and written come from (host_summary.io_source_of)."""
        return io_source_of(c.per_tx for f in self.families for r in f.rows for c in r.cells)

    def to_dict(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "axes": self.axes,
            "columns": self.columns,
            "baseline": self.baseline,
            "unit": self.unit,
            "summary": self.summary,
            "io_source": self.io_source,
            "families": [
                {
                    "name": f.name,
                    "rows": [
                        {"label": r.label, "test": r.test, "cells": [c.to_dict() for c in r.cells]}
                        for r in f.rows
                    ],
                    "moves": [
                        {"column": m.column, "ratio": m.ratio, "faster": m.faster,
                         "slower": m.slower, "tested": m.tested, "untested": m.untested,
                         "text": m.text}
                        for m in f.moves
                    ],
                }
                for f in self.families
            ],
        }  # fmt: skip

    def csv_rows(self) -> list[list[object]]:
        """One line per row and column, with a header: what a spreadsheet pivots."""
        lines: list[list[object]] = [list(CSV_HEADER)]
        for family in self.families:
            for row in family.rows:
                for cell in row.cells:
                    v = cell.verdict
                    lines.append(
                        [family.name, row.label, cell.column, cell.n, cell.throughput, self.unit,
                         v.ratio if v else 1.0 if cell.column == self.baseline else None,
                         v.low if v else None, v.high if v else None,
                         v.text if v else ("baseline" if cell.column == self.baseline else ""),
                         v.p_adjusted if v else None,
                         *(getattr(cell.per_tx, name) for name in PER_TX),
                         cell.qps, 1.0 if cell.column == self.baseline else cell.rqps,
                         *(getattr(cell.per_query, name) for name in PER_TX),
                         cell.per_tx.io_source]
                    )  # fmt: skip
        return lines


CSV_HEADER = (
    "family", "row", "column", "n", "throughput", "unit", "ratio", "ratio_low", "ratio_high",
    "verdict", "p_adjusted", "cpu_us_per_tx", "csw_per_tx", "read_kb_per_tx", "write_kb_per_tx",
    "qps", "rqps", "cpu_us_per_query", "csw_per_query", "read_kb_per_query", "write_kb_per_query",
    "io_source",
)  # fmt: skip


def tone(verdict: Verdict | None) -> str:
    """The cell's colour: green faster, red slower, deeper the further; grey when the
    difference is not significant; "" for the baseline and cells without a verdict."""
    if verdict is None or verdict.ratio is None:
        return ""
    if verdict.verdict == verdicts.SAME:
        return SAME_TONE
    if not verdict.significant:  # not tested (too few repeats, no ratio): no colour claims
        return ""
    factor = verdict.ratio if verdict.ratio >= 1 else 1 / verdict.ratio
    level = sum(factor >= s for s in _LEVELS)
    return (FASTER_TONES if verdict.ratio >= 1 else SLOWER_TONES)[level]


# --- the axes ------------------------------------------------------------------------------


def column_axes(runs: Sequence[TableRun]) -> list[str]:
    """The axes whose values differ between the runs, as columns may show them: the
    servers first (the issue most tables answer), then settings, options, threads."""
    axes = [SERVER] if len({_server_label(r) for r in runs}) > 1 else []
    axes += [n for n in _varying(r.figures.settings for r in runs)]
    axes += [n for n in _varying(r.options for r in runs) if n not in axes]
    if len({r.figures.threads for r in runs}) > 1:
        axes.append(THREADS)
    return axes


def _varying(mappings: Iterable[Mapping[str, str]]) -> list[str]:
    values: dict[str, set[str]] = {}
    for mapping in mappings:
        for name, value in mapping.items():
            values.setdefault(name, set()).add(value)
    return sorted(name for name, seen in values.items() if len(seen) > 1)


def _server_label(run: TableRun) -> str:
    return server_label(run.server)


def server_label(server: Mapping[str, str]) -> str:
    """A server's column: its value alone on one axis (`db2`), else `target=db2 config=a`."""
    if len(server) == 1:
        return next(iter(server.values()))
    return " ".join(f"{name}={value}" for name, value in server.items())


def column_of(run: TableRun, axis: str) -> str:
    if axis == SERVER:
        return _server_label(run)
    if axis == THREADS:
        return f"threads={run.figures.threads}"
    values = {**run.options, **run.figures.settings}
    return f"{SHORT_NAMES.get(axis, axis)}={values.get(axis, '')}"


def row_of(run: TableRun, axis: str, shown: Sequence[str]) -> tuple[tuple[Any, ...], str]:
    """The row's identity (its sort key too) and its label: the run's cell without the
    column axis, naming only what differs between rows."""
    figures = run.figures
    parts = [run.test] if run.test else []
    if axis != SERVER and SERVER in shown:
        parts.append(_server_label(run))
    values = {**figures.settings, **run.options}
    parts += [f"{SHORT_NAMES.get(n, n)}={values[n]}" for n in shown if n in values and n != axis]
    if axis != THREADS and THREADS in shown:
        parts.append(f"threads={figures.threads}")
    label = " ".join(parts) or "all runs"
    threads = figures.threads if axis != THREADS else 0
    return (run.test_order, threads, label), label


# --- the table -----------------------------------------------------------------------------


def relative_table(
    runs: Sequence[TableRun],
    *,
    axis: str = "",
    orders: Mapping[str, Sequence[str]] | None = None,
) -> RelativeTable | None:
    """The table with `axis`'s values as columns (the first varying axis by default), in
    the plan's order of them (`orders`: axis → values, as column labels or bare values);
    None when nothing varies between the runs, so there is nothing to compare."""
    axes = column_axes(runs)
    if not axes:
        return None
    axis = chosen_axis(axis, axes)
    columns = _columns(runs, axis, (orders or {}).get(axis, ()))
    cells: dict[tuple[Any, ...], dict[str, list[TableRun]]] = {}
    labels: dict[tuple[Any, ...], TableRun] = {}
    for run in runs:
        key, _ = row_of(run, axis, axes)
        cells.setdefault(key, {}).setdefault(column_of(run, axis), []).append(run)
        labels.setdefault(key, run)
    families: dict[str, list[Row]] = {}
    for key in sorted(cells):
        first = labels[key]
        row = _row(row_of(first, axis, axes)[1], first, cells[key], columns)
        families.setdefault(first.family or CELLS, []).append(row)
    unit = throughput_unit(r.figures for r in runs)
    blocks = [_family(name, rows, columns) for name, rows in families.items()]
    return RelativeTable(axis, axes, columns, blocks, unit)


def chosen_axis(asked: str, axes: Sequence[str]) -> str:
    """The axis asked for (a setting by its full name or the short one its columns show),
    the first by default; an axis the runs do not vary is refused, never swapped for
    another: a table under the wrong columns reads as an answer to the question asked."""
    if not asked:
        return axes[0]
    full = {short: name for name, short in SHORT_NAMES.items()}.get(asked, asked)
    if full not in axes:
        raise InvalidInput(
            "axis", f"{asked!r} does not vary in this batch; its columns can be: {', '.join(axes)}"
        )
    return full


def _columns(runs: Sequence[TableRun], axis: str, order: Sequence[str]) -> list[str]:
    seen = list(dict.fromkeys(column_of(r, axis) for r in runs))
    wanted = [str(v) for v in order]

    def rank(column: str) -> tuple[int, Any]:
        bare = column.split("=", 1)[-1] if axis != SERVER else column
        for place, value in enumerate(wanted):
            if value in (column, bare):
                return (place, 0)
        return (len(wanted), _natural(bare))

    return sorted(seen, key=rank)


def _natural(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def _row(
    label: str, first: TableRun, by_column: Mapping[str, list[TableRun]], columns: list[str]
) -> Row:
    base = [r.figures for r in by_column.get(columns[0], [])]
    cells = []
    for column in columns:
        members = [r.figures for r in by_column.get(column, [])]
        first_column = column == columns[0]
        cells.append(
            TableCell(
                column, *_measured(members),
                verdict=None if first_column else verdicts.compare_runs(base, members),
                per_tx=cell_per_tx(members),
                qps=stats.geometric_mean(_qps(members)),
                rqps=None if first_column else stats.geometric_ratio(_qps(base), _qps(members)),
                per_query=cell_per_query(members),
            )
        )  # fmt: skip
    return Row(label, first.test, first.family or CELLS, cells)


def _measured(runs: Sequence[RunFigures]) -> tuple[int, float | None]:
    values = [v for r in runs if r.status in FINISHED_WELL and (v := r.throughput) is not None]
    return len(values), stats.geometric_mean(values)


def _qps(runs: Sequence[RunFigures]) -> list[float]:
    return [v for r in runs if r.status in FINISHED_WELL and (v := r.figures.qps) is not None]


def _family(name: str, rows: list[Row], columns: list[str]) -> Family:
    """The family's verdicts corrected together (Holm over its cells), and its moves."""
    places = [(i, j) for i, row in enumerate(rows) for j, c in enumerate(row.cells) if c.verdict]
    found = verdicts.corrected([rows[i].cells[j].verdict for i, j in places])  # type: ignore[misc]
    for (i, j), verdict in zip(places, found, strict=True):
        cells = list(rows[i].cells)
        cells[j] = dataclasses.replace(cells[j], verdict=verdict)
        rows[i] = Row(rows[i].label, rows[i].test, rows[i].family, cells)
    moves = [
        family_move(name, c, [v for row in rows if (v := row.cells[j].verdict) is not None])
        for j, c in enumerate(columns)
        if j
    ]
    return Family(name, rows, moves)


def percent_text(ratio: float | None) -> str:
    """`+12.3 %` of a ratio, for the cells of a printed table."""
    return "" if ratio is None else signed_pct((ratio - 1) * 100)
