"""The report table: a batch's cells by thread count, then by series, settings side by
side at each count with their ratio to the baseline; and the same as tab-separated text
to paste into a spreadsheet.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runs.analysis.noise import stats
from runs.analysis.series import Point, Series, thread_counts


@dataclass(frozen=True)
class TableRow:
    threads: int
    series: Series
    point: Point
    ratio: float | None
    is_baseline: bool
    first_of_threads: bool
    rows_for_threads: int


def report_table(series: Sequence[Series], baseline_key: str) -> list[TableRow]:
    """Rows by thread count, then by series: settings side by side at each count."""
    ratio = ratios(series, baseline_key)
    rows: list[TableRow] = []
    for threads in thread_counts(series):
        present = [(s, p) for s in series if (p := s.at(threads)) is not None]
        for i, (s, point) in enumerate(present):
            rows.append(
                TableRow(
                    threads=threads,
                    series=s,
                    point=point,
                    ratio=ratio.get((s.key, threads)),
                    is_baseline=s.key == baseline_key,
                    first_of_threads=i == 0,
                    rows_for_threads=len(present),
                )
            )
    return rows


def table_tsv(rows: Sequence[TableRow], unit: str, latency: str = "p95") -> str:
    """The report table as tab-separated text, to paste into a spreadsheet: the cells'
    throughput as every table gives it (stats.ESTIMATOR), the latency percentile the plan
    asked for (`latency`: p95, p99), each named in its column's head."""
    head = [f"{unit} ({stats.ESTIMATOR})", "qps", f"{latency} ms", "errors", "ratio"]
    lines = ["\t".join(["threads", "setting", *head])]
    for row in rows:
        p = row.point
        lines.append(
            "\t".join(
                [
                    str(row.threads),
                    row.series.label,
                    _fmt(p.mean),
                    _fmt(p.qps),
                    _fmt(p.latency_ms),
                    _fmt(p.errors, 0),
                    _fmt(row.ratio, 2),
                ]
            )
        )
    return "\n".join(lines) + "\n"


def _fmt(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def ratios(series: Sequence[Series], baseline_key: str) -> dict[tuple[str, int], float]:
    """Each series' throughput over the baseline's, per thread count: the ratio of the
    geometric means of the repeats, the one estimator the verdict's ratio and interval
    are centred on (verdicts.py), so that the table's "x baseline" and the sentence agree."""
    baseline = next((s for s in series if s.key == baseline_key), None)
    if baseline is None:
        return {}
    result = {}
    for s in series:
        for point in s.points:
            base = baseline.at(point.threads)
            ratio = stats.geometric_ratio(base.values, point.values) if base else None
            if ratio is not None:
                result[(s.key, point.threads)] = ratio
    return result
