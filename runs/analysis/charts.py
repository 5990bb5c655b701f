"""The shapes of the results page's charts: scaling, time series, the batch timeline,
latency percentiles and CDFs from the histogram, the matrix grid, the open loop's
achieved rate against the offered one. The time series come
bucketed from the database (runs/services/answers/timeseries.py), with the point counts set here.

Pure: no Django, no I/O."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from runs.analysis import run_facts
from runs.analysis.noise import stats
from runs.analysis.results import FINISHED_WELL, RunFigures, series_key, series_label
from runs.analysis.series import PALETTE, Series, group_series, thread_counts
from runs.columns import BatchEnvironment

LATENCY_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)
RATE = "rate"  # the open-loop option (--rate), the rate chart's axis


MAX_CHART_POINTS = 240  # per series: more than a chart's width in pixels shows nothing new
# What a results page carries, whatever the size of its batch: the timeline shares its
# points between all runs; each chosen run (at most MAX_SELECTED_RUNS) has tps, qps,
# latency and a counter of MAX_CHART_POINTS each, and a CDF of MAX_CDF_POINTS.
TIMELINE_POINTS = 8_000
MAX_SELECTED_RUNS = 8
MAX_CDF_POINTS = 200
POINT_BUDGET = 20_000
SERIES_BUCKETS = MAX_CHART_POINTS // 2  # a bucket gives its lowest and highest point


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


def latency_cdf(
    histogram: Sequence[Sequence[float]], max_points: int = MAX_CDF_POINTS
) -> list[list[float]]:
    rows = [(float(r[0]), int(r[1])) for r in histogram]
    cdf = stats.cdf_from_histogram(rows)
    if len(cdf) > max_points:  # monotone: an even stride keeps its shape
        stride = math.ceil(len(cdf) / max_points)
        cdf = cdf[::stride] + ([cdf[-1]] if (len(cdf) - 1) % stride else [])
    return [[value, share] for value, share in cdf]


def offset_s(start: datetime | None, origin: datetime | None) -> float | None:
    if start is None or origin is None:
        return None
    return (start - origin).total_seconds()


def bucket_points(low: Sequence[float] | None, high: Sequence[float] | None) -> list[list[float]]:
    """A bucket's lowest and highest point, each [value, x] as PostgreSQL's min and max
    of ARRAY[value, x] give them, as chart points [x, value] in x order, once each."""
    if low is None or high is None:
        point = high if low is None else low
        return [] if point is None else [[float(point[1]), float(point[0])]]
    # two points at most: ordered and made one by hand (a set and a sort for each of a
    # page's 4,000 buckets cost more than the rest of the timeline)
    a, b = (float(low[1]), float(low[0])), (float(high[1]), float(high[0]))
    if a == b:
        return [[*a]]
    return [[*a], [*b]] if a < b else [[*b], [*a]]


def timeline_buckets(run_count: int) -> int:
    """Buckets a run of the timeline gets: the timeline's points shared by all runs."""
    return max(2, TIMELINE_POINTS // (2 * max(1, run_count)))


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
                    "y": p.mean,
                    "yMin": p.low,
                    "yMax": p.high,
                    "p95": p.latency_ms,
                    "p95Min": p.latency_min,
                    "p95Max": p.latency_max,
                    "n": p.n,
                }
                for p in s.points
                if p.mean is not None
            ],
            "peak": {"threads": s.peak.threads, "value": s.peak.value} if s.peak else None,
        }
        for s in series
    ]


def timeseries_chart(
    runs: Sequence[RunFigures],
    series: Mapping[int, Mapping[str, list[list[float]]]],
    colours: Mapping[int, str],
    *,
    warmup_s: float,
    counters: Mapping[int, list[list[float]]] | None = None,
) -> list[dict[str, Any]]:
    """The chosen runs over time: `series` holds each run's tps, qps and latency_ms
    points, `counters` the points of the counter asked for (see services/timeseries.py)."""
    result = []
    for run in runs:
        lines = series.get(run.id, {})
        item: dict[str, Any] = {
            "run": run.id,
            "label": f"#{run.position + 1} {run.label}",
            "colour": colours.get(run.id, PALETTE[-1]),
            "warmup_s": warmup_s,
            "tps": lines.get("tps", []),
            "qps": lines.get("qps", []),
            "latency": lines.get("latency_ms", []),
        }
        if counters is not None:
            item["counter"] = counters.get(run.id, [])
        result.append(item)
    return result


def timeline_chart(
    runs: Sequence[RunFigures], points: Mapping[int, Any], colours: Mapping[int, str]
) -> list[dict[str, Any]]:
    """Every run's tps on the batch's time axis: `points`, a run's chart points on the
    batch's clock (seconds since the batch started), passed on as they are (JSON text
    PostgreSQL made: timeseries.timeline_series); a run with none is left out. `level`
    names the thread count where it changes from the run before (a ramp's levels: the
    chart labels each), "" elsewhere."""
    result = []
    previous = None
    for run in sorted(runs, key=lambda r: r.position):
        if run.id not in points:
            continue
        level = threads_text(run.threads) if run.threads != previous else ""
        previous = run.threads
        result.append(
            {
                "run": run.id,
                "label": f"#{run.position + 1} {run.label}",
                "colour": colours.get(run.id, PALETTE[-1]),
                "points": points[run.id],
                "level": level,
            }
        )
    return result


def threads_text(count: int) -> str:
    return "1 thread" if count == 1 else f"{count} threads"


def latency_chart(
    runs: Sequence[RunFigures],
    histograms: Mapping[int, Sequence[Sequence[float]]],
    colours: Mapping[int, str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Percentile rows and CDF lines of the runs that have a histogram."""
    rows, lines = [], []
    for run in runs:
        histogram = histograms.get(run.id) or []
        if not histogram:
            continue
        label = f"#{run.position + 1} {run.label}"
        rows.append({"run": run.id, "label": label, **latency_percentiles(histogram)})
        lines.append(
            {"run": run.id, "label": label, "colour": colours.get(run.id, PALETTE[-1]),
             "points": latency_cdf(histogram)}
        )  # fmt: skip
    return rows, lines


def latency_histograms(
    runs: Sequence[RunFigures],
    histograms: Mapping[int, Sequence[Sequence[float]]],
    colours: Mapping[int, str],
) -> list[dict[str, Any]]:
    """sysbench's own buckets of each run that has them: [ms, share of requests in %]."""
    lines = []
    for run in runs:
        shares = run_facts.histogram_shares(histograms.get(run.id) or [])
        if shares:
            lines.append(
                {"run": run.id, "label": f"#{run.position + 1} {run.label}",
                 "colour": colours.get(run.id, PALETTE[-1]),
                 "points": [[ms, share] for ms, _, share in shares]}
            )  # fmt: skip
    return lines


def no_histogram_reason(runs: Sequence[RunFigures]) -> str:
    """Why the chosen runs have no histogram: sysbench prints none on a forced shutdown."""
    if any(run.figures.forced_shutdown for run in runs):
        return run_facts.no_histogram_reason("forced_shutdown")
    return (
        "The chosen runs have no latency histogram (run sysbench with --histogram=on, "
        "benchdash's default)."
    )


def counter_names(runs: Iterable[RunFigures]) -> tuple[list[str], set[str]]:
    """The counters the runs have, cumulative and gauges (those read as they are)."""
    names: set[str] = set()
    gauges: set[str] = set()
    for run in runs:
        counters = run.server_counters
        names.update(counters.deltas)
        gauges.update(counters.gauges)
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


def reference_threads(
    environment: Mapping[str, Any], cpu_cores: int | None, disk_count: int | None
) -> tuple[int | None, str]:
    """The cores x 2 + disks thread count, and where its figures come from."""
    reference = BatchEnvironment.load(environment).reference
    if reference.get("threads"):
        cores, disks = reference.get("cpu_cores"), reference.get("disk_count")
        return int(reference["threads"]), f"{cores} cores x 2 + {disks} disks"
    if cpu_cores and disk_count:
        return cpu_cores * 2 + disk_count, f"{cpu_cores} cores x 2 + {disk_count} disks"
    return None, ""


# --- open loop: achieved and p95 against the offered rate ------------------------------------


def rate_chart(runs: Sequence[RunFigures]) -> list[dict[str, Any]]:
    """One line per series and thread count with a rate axis: for each offered rate, the
    achieved rate (each run's whole steady state) and latency percentile, stats.ESTIMATOR of
    the repeats' as every table's, and the longest queue; empty without a rate axis."""
    lines: dict[tuple[str, int], dict[int, list[RunFigures]]] = {}
    labels: dict[tuple[str, int], str] = {}
    for run in runs:
        rate = run.axis_options.get(RATE, "")
        if not rate.isdigit() or run.status not in FINISHED_WELL:
            continue
        options = {k: v for k, v in run.axis_options.items() if k != RATE}
        key = (series_key(run.settings, options, run.cell_axes), run.threads)
        labels[key] = f"{series_label(run.settings, options, run.cell_axes)}, {run.threads} thr"
        lines.setdefault(key, {}).setdefault(int(rate), []).append(run)
    return [
        {
            "label": labels[key],
            "colour": PALETTE[index % len(PALETTE)],
            "points": [_rate_point(rate, members) for rate, members in sorted(by_rate.items())],
        }
        for index, (key, by_rate) in enumerate(sorted(lines.items()))
    ]


def _rate_point(rate: int, runs: list[RunFigures]) -> dict[str, Any]:
    # the whole run's rate after the warmup, as the rate search judges a try (auto/rate.py)
    achieved = [v for r in runs if (v := r.throughput)]
    p95 = [v for r in runs if (v := r.latency_ms) is not None]
    queues = [q for r in runs if (q := r.figures.queue_length_max) is not None]
    return {
        "offered": rate,
        "achieved": stats.geometric_mean(achieved),
        "p95": stats.geometric_mean(p95),
        "queue": max(queues) if queues else None,
    }
