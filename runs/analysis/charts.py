"""The shapes of the results page's charts: scaling, time series, the batch timeline,
latency percentiles and CDFs from the histogram, counter rates, the matrix grid.

Pure: no Django, no I/O."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from runs.analysis import stats
from runs.analysis.results import PALETTE, RunFigures, Series, group_series, thread_counts

LATENCY_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)


MAX_CHART_POINTS = 240  # per series: more than a chart's width in pixels shows nothing new


def xy(
    points: Iterable[Sequence[float | None]], max_points: int = MAX_CHART_POINTS
) -> list[list[float]]:
    """Chart points without gaps, downsampled keeping peaks and troughs."""
    clean = [
        (float(p[0] or 0), float(p[1])) for p in points if p[1] is not None and not math.isnan(p[1])
    ]
    return [[x, y] for x, y in stats.downsample_keep_extremes(clean, max(max_points, 4))]


def latency_percentiles(histogram: Sequence[Sequence[float]]) -> dict[str, float | None]:
    rows = [(float(r[0]), int(r[1])) for r in histogram]
    return {
        f"p{pct:g}": stats.percentile_from_histogram(rows, pct) if rows else None
        for pct in LATENCY_PERCENTILES
    }


def latency_cdf(histogram: Sequence[Sequence[float]], max_points: int = 400) -> list[list[float]]:
    rows = [(float(r[0]), int(r[1])) for r in histogram]
    cdf = stats.cdf_from_histogram(rows)
    if len(cdf) > max_points:  # monotone: an even stride keeps its shape
        step = math.ceil(len(cdf) / max_points)
        cdf = cdf[::step] + ([cdf[-1]] if (len(cdf) - 1) % step else [])
    return [[value, share] for value, share in cdf]


def counter_rates(
    readings: Sequence[tuple[float, Mapping[str, float]]], name: str, *, gauge: bool
) -> list[list[float]]:
    """A counter per second between readings (cumulative counters) or as read (gauges)."""
    points = []
    previous: tuple[float, float] | None = None
    for time_s, values in readings:
        if name not in values:
            continue
        value = float(values[name])
        if gauge:
            points.append([time_s, value])
        elif previous is not None and time_s > previous[0]:
            points.append([time_s, (value - previous[1]) / (time_s - previous[0])])
        previous = (time_s, value)
    return points


def offset_s(start: datetime | None, origin: datetime | None) -> float | None:
    if start is None or origin is None:
        return None
    return (start - origin).total_seconds()


MAX_SELECTED_RUNS = 8


SampleRow = tuple[int, float, float | None, float | None, float | None, bool]


def default_selection(series: Sequence[Series], limit: int = 6) -> list[int]:
    """The runs whose time series a page shows first: each series' first repeat at its
    peak thread count."""
    chosen = []
    for s in series:
        peak = s.peak
        point = s.at(peak.threads) if peak else (s.points[0] if s.points else None)
        if point and point.run_ids:
            chosen.append(point.run_ids[0])
    return chosen[:limit]


def run_colours(runs: Sequence[RunFigures], series: Sequence[Series]) -> dict[int, str]:
    colour_of = {s.key: s.colour for s in series}
    return {r.id: colour_of.get(r.series_key, PALETTE[-1]) for r in runs}


def scaling_chart(series: Sequence[Series]) -> list[dict[str, Any]]:
    return [
        {
            "key": s.key,
            "label": s.label,
            "colour": s.colour,
            "points": [
                {
                    "x": p.threads,
                    "y": p.median,
                    "yMin": p.low,
                    "yMax": p.high,
                    "p95": p.latency_ms,
                    "p95Min": p.latency_min,
                    "p95Max": p.latency_max,
                    "n": p.n,
                }
                for p in s.points
                if p.median is not None
            ],
            "peak": {"threads": s.peak.threads, "value": s.peak.value} if s.peak else None,
        }
        for s in series
    ]


def timeseries_chart(
    runs: Sequence[RunFigures],
    samples: Mapping[int, Sequence[SampleRow]],
    colours: Mapping[int, str],
    *,
    warmup_s: float,
    counters: Mapping[int, Sequence[tuple[float, Mapping[str, float]]]] | None = None,
    counter: str = "",
    gauge: bool = False,
) -> list[dict[str, Any]]:
    result = []
    for run in runs:
        rows = samples.get(run.id, [])
        item: dict[str, Any] = {
            "run": run.id,
            "label": f"#{run.position + 1} {run.label}",
            "colour": colours.get(run.id, PALETTE[-1]),
            "warmup_s": warmup_s,
            "tps": xy((r[1], r[2]) for r in rows),
            "qps": xy((r[1], r[3]) for r in rows),
            "latency": xy((r[1], r[4]) for r in rows),
        }
        if counters is not None and counter:
            item["counter"] = xy(counter_rates(counters.get(run.id, []), counter, gauge=gauge))
        result.append(item)
    return result


def timeline_chart(
    runs: Sequence[RunFigures],
    samples: Mapping[int, Sequence[SampleRow]],
    colours: Mapping[int, str],
    origin: datetime | None,
) -> list[dict[str, Any]]:
    """Every run on the batch's time axis (seconds since the batch started)."""
    result = []
    for run in runs:
        offset = offset_s(run.started_at, origin)
        rows = samples.get(run.id, [])
        if offset is None or not rows:
            continue
        result.append(
            {
                "run": run.id,
                "label": f"#{run.position + 1} {run.label}",
                "colour": colours.get(run.id, PALETTE[-1]),
                "points": xy(((offset + r[1]), r[2]) for r in rows),
            }
        )
    return result


def latency_chart(
    runs: Sequence[Any], colours: Mapping[int, str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Percentile rows and CDF lines of runs (objects with pk, position, label, histogram)."""
    rows, lines = [], []
    for run in runs:
        histogram = run.histogram or []
        if not histogram:
            continue
        label = f"#{run.position + 1} {RunFigures.of(run).label}"
        rows.append({"run": run.pk, "label": label, **latency_percentiles(histogram)})
        lines.append(
            {"run": run.pk, "label": label, "colour": colours.get(run.pk, PALETTE[-1]),
             "points": latency_cdf(histogram)}
        )  # fmt: skip
    return rows, lines


def counter_names(runs: Iterable[RunFigures]) -> tuple[list[str], set[str]]:
    """The counters the runs have, cumulative and gauges (those read as they are)."""
    names: set[str] = set()
    gauges: set[str] = set()
    for run in runs:
        names.update((run.counters.get("deltas") or {}).keys())
        gauges.update((run.counters.get("gauges") or {}).keys())
    return sorted(names | gauges), gauges


@dataclass(frozen=True)
class GridRow:
    series: Series
    cells: list[list[RunFigures]]  # one list of repeats per thread count, by round


def matrix_grid(runs: Sequence[RunFigures]) -> tuple[list[int], list[GridRow]]:
    """The batch as a grid, series by thread count, each cell its repeats: the live
    page colours them by status."""
    series = group_series(runs)
    threads = thread_counts(series)
    by_cell: dict[tuple[str, int], list[RunFigures]] = {}
    for run in runs:
        by_cell.setdefault((run.series_key, run.threads), []).append(run)
    rows = [
        GridRow(
            series=s,
            cells=[sorted(by_cell.get((s.key, t), []), key=lambda r: r.round) for t in threads],
        )
        for s in series
    ]
    return threads, rows
