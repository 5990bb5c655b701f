"""The samples of runs as chart series, bucketed in PostgreSQL.

A page never reads a run's samples one by one: each run's time axis is cut into a fixed
number of buckets (`width_bucket` from 0 to the run's last sample) and each bucket sends
its lowest and its highest point, where they were. An average would flatten the stalls
people look for; the extremes keep every peak and trough, and the number of points a
page carries depends on the bucket count, not on the length or number of the runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from django.db import connection

from runs.json_text import JSONText
from runs.models import CounterSample, Sample

# run id -> metric -> points [x, y] in x order
RunSeries = dict[int, dict[str, list[list[float]]]]

SAMPLE_METRICS = ("tps", "qps", "latency_ms")


def sample_series(
    run_ids: Sequence[int], *, buckets: int, metrics: Sequence[str] = SAMPLE_METRICS
) -> RunSeries:
    """Each run's samples of `metrics` over its time, `buckets` buckets a run: one query."""
    rows = _bucketed(Sample._meta.db_table, sample_source(metrics), metrics, run_ids, buckets, {})
    return _points(rows, metrics)


def timeline_series(
    offsets: Mapping[int, float], *, buckets: int, metric: str = "tps"
) -> dict[int, JSONText]:
    """Each run's `metric` on the batch's clock: its x plus the run's offset (`offsets`:
    run id -> seconds from the batch's start to the run's), rounded to the millisecond by
    PostgreSQL (half away from zero, where Python's round() gives an exact half to the even
    side: a point in a thousand 1 ms apart), as the JSON text of its chart points; a run
    without a finite point has none. The text goes to the page as PostgreSQL made it
    (JSONText: runs/json_text.py writes it unread): the 8,000 points of a 200-run batch's
    timeline, read into floats, shifted and written again, were a quarter of the CPU of
    its results page's first view."""
    texts = _bucketed(
        Sample._meta.db_table, sample_source([metric]), [metric], list(offsets), buckets, {},
        shifts=list(offsets.values()),
    )  # fmt: skip
    return {run_id: JSONText(text) for run_id, text in texts if text != "[]"}


def sample_source(metrics: Sequence[str]) -> str:
    """The (x, *metrics) rows of run `r.id`'s samples (a subquery of _bucketed)."""
    unknown = set(metrics) - set(SAMPLE_METRICS)
    if unknown:
        raise ValueError(f"not a sample metric: {sorted(unknown)}")
    return (
        f"SELECT time_s AS x, {', '.join(metrics)} "  # noqa: S608 - names checked above
        f"FROM {Sample._meta.db_table} WHERE run_id = r.id"
    )


def counter_series(
    run_ids: Sequence[int], name: str, *, gauge: bool, buckets: int
) -> dict[int, list[list[float]]]:
    """A server counter of each run: per second between readings (cumulative counters) or
    as read (gauges), bucketed like the samples: one query."""
    rows = _bucketed(
        CounterSample._meta.db_table, counter_source(gauge=gauge), ["counter"], run_ids,
        buckets, {"name": name},
    )  # fmt: skip
    return {run_id: orjson.loads(text) for run_id, text in rows}


def counter_source(*, gauge: bool) -> str:
    """The (x, counter) rows of run `r.id`'s counter %(name)s (a subquery of _bucketed)."""
    number = "CASE WHEN jsonb_typeof(\"values\" -> %(name)s) = 'number' " + (
        'THEN ("values" ->> %(name)s)::float8 END'
    )
    table = CounterSample._meta.db_table
    rate = "v" if gauge else "(v - lag(v) OVER w) / NULLIF(x - lag(x) OVER w, 0)"
    source = (
        f"SELECT x, {rate} AS counter, x - lag(x) OVER w AS gap FROM ("  # noqa: S608
        f"SELECT time_s AS x, {number} AS v FROM {table} "
        "WHERE run_id = r.id) AS readings "
        "WHERE v IS NOT NULL WINDOW w AS (ORDER BY x)"
    )
    if not gauge:  # whole intervals only: see WHOLE_INTERVAL
        source = (
            f"SELECT x, counter FROM ({source}) AS rates "  # noqa: S608 - no value in the text
            f"WHERE gap >= {WHOLE_INTERVAL} * ({_typical_gap(table)})"
        )
    return source


# The sampler reads once more when sysbench ends, a fraction of an interval after the
# reading before: the few rows of that moment, divided by a few hundredths of a second,
# made rates of -15,471 and +348,724 rows/s. A rate counts only over an interval at least
# this share of the run's usual interval between readings.
WHOLE_INTERVAL = 0.5


def _typical_gap(table: str) -> str:
    """The run's median time between two readings (a subquery of run r.id)."""
    return (
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY g) FROM ("  # noqa: S608
        f"SELECT time_s - lag(time_s) OVER (ORDER BY time_s) AS g FROM {table} "
        "WHERE run_id = r.id) AS gaps"
    )


def _points(rows: list[tuple[Any, ...]], metrics: Sequence[str]) -> RunSeries:
    """_bucketed's texts read: run id -> metric -> its points."""
    return {
        run_id: {m: orjson.loads(text) for m, text in zip(metrics, texts, strict=True)}
        for run_id, *texts in rows
    }


def _bucketed(
    table: str,
    source: str,
    metrics: Sequence[str],
    run_ids: Sequence[int],
    buckets: int,
    params: dict[str, Any],
    *,
    shifts: Sequence[float] | None = None,
) -> list[tuple[Any, ...]]:
    """`source` gives the (x, *metrics) rows of run `r.id`; each run's x from 0 to its
    last reading (found through the (run, seq) index) is cut into `buckets` buckets.

    Run by run (a lateral join): each run's rows come through the run's index and are
    grouped on their own, where one grouping of every run's rows would sort them all.
    JIT is off for the query: the planner's guess of a run's rows is the average of all
    runs, which a few imported runs of a million samples inflate, and compiling the
    query would then take 150-400 ms for a query that runs in 50.

    Each run comes back as a JSON text of its chart points a metric, made by PostgreSQL: a
    bucket's lowest and highest point (charts.bucket_points' rule: [x, value], in x order,
    once when they are the same point), the buckets in order: rows of the run's id and
    its texts, in run order. Python reads 200 texts instead of building 4,000 rows of
    arrays, or passes them on unread (timeline_series); with `shifts`, each run's x plus
    its shift, to the millisecond.
    """
    if not run_ids:
        return []
    # Finite values only (NULL, NaN and infinity compare false): JSON has no infinity.
    finite = "WHERE {m} > '-Infinity' AND {m} < 'Infinity'"
    extremes = ", ".join(
        f"min(ARRAY[{m}, x]) FILTER ({finite.format(m=m)}) AS low_{i}, "
        f"max(ARRAY[{m}, x]) FILTER ({finite.format(m=m)}) AS high_{i}"
        for i, m in enumerate(metrics)
    )
    # Both ends of a bucket, per metric; a bucket without a finite value has none (both
    # extremes are NULL then: the same rows feed them).
    ends = ", ".join(f"({i}, low_{i}), ({i}, high_{i})" for i in range(len(metrics)))
    # Each number as float8 writes it (the shortest text that reads back as the same
    # float), with ".0" after a whole one ("12.0", as Python writes a float): every
    # number of the JSON is then read as a float by orjson's parser.
    number = "CASE WHEN {n}::text ~ '^-?[0-9]+$' THEN {n}::text || '.0' ELSE {n}::text END"
    x = "x" if shifts is None else "round((x + r.shift)::numeric, 3)::float8"
    point = f"'[' || {number.format(n=x)} || ', ' || {number.format(n='v')} || ']'"
    lines = ", ".join(
        f"'[' || COALESCE(string_agg({point}, ', ' ORDER BY bucket, x, v) "
        f"FILTER (WHERE m = {i} AND x IS NOT NULL), '') || ']'"
        for i in range(len(metrics))
    )
    last_x = f"SELECT time_s FROM {table} WHERE run_id = r.id ORDER BY seq DESC LIMIT 1"  # noqa: S608
    sql = f"""
        SET LOCAL jit = off;
        SELECT r.id, lines.* FROM unnest(%(runs)s::bigint[], %(shifts)s::float8[]) AS r(id, shift)
        CROSS JOIN LATERAL (
            SELECT {lines} FROM (
                SELECT DISTINCT bucket, m, p[2] AS x, p[1] AS v FROM (
                    SELECT width_bucket(source.x, 0, greatest(({last_x}), 0) + 0.001,
                                        %(buckets)s) AS bucket,
                           {extremes}
                    FROM ({source}) AS source
                    GROUP BY 1
                ) AS b CROSS JOIN LATERAL (VALUES {ends}) AS e(m, p)
            ) AS points
            HAVING max(bucket) IS NOT NULL  -- a run without a reading has no line at all
        ) AS lines
    """  # noqa: S608 - table and column names are the models', values are parameters
    with connection.cursor() as cursor:
        cursor.execute(sql, {**params, "runs": list(run_ids), "buckets": max(1, buckets),
                             "shifts": list(shifts or [0.0] * len(run_ids))})  # fmt: skip
        cursor.nextset()  # the SET's result comes first
        rows = cursor.fetchall()
    return sorted(rows, key=lambda r: r[0])
