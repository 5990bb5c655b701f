"""Chart series bucketed in PostgreSQL: every run cut into a fixed number of buckets, each
keeping its trough and its peak where they were, whatever the run's length."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import orjson
import pytest
from django.db import connection
from django.db.models import F
from django.utils import timezone

from runs import json_text
from runs.analysis import charts
from runs.models import Batch, CounterSample, Run, Sample
from runs.services.answers import timeseries

pytestmark = pytest.mark.django_db


def stored_run(batch: Batch, position: int, tps: Sequence[float | None]) -> Run:
    now = timezone.now()
    run = Run.objects.create(
        batch=batch, position=position, round=0, cell_key="k", threads=1, status="done",
        started_at=now, finished_at=now,
    )  # fmt: skip
    Sample.objects.bulk_create(
        Sample(run=run, seq=i, time_s=float(i), threads=1, tps=value, qps=None if value is None
               else value * 10, latency_ms=2.0, received_at=now)
        for i, value in enumerate(tps, 1)
    )  # fmt: skip
    return run


@pytest.fixture
def batch() -> Batch:
    return Batch.objects.create(params={}, seed=0, status="done", launched_by="import")


def test_a_long_run_comes_in_buckets_keeping_its_stall_and_its_spike_where_they_were(batch):
    tps = [1000.0 + (i % 7) for i in range(10_000)]
    tps[1234], tps[8765] = 3.0, 99_999.0
    run = stored_run(batch, 0, tps)

    lines = timeseries.sample_series([run.pk], buckets=50)[run.pk]

    assert len(lines["tps"]) <= 100 and len(lines["qps"]) <= 100
    assert [1235.0, 3.0] in lines["tps"] and [8766.0, 99_999.0] in lines["tps"]
    assert [x for x, _ in lines["tps"]] == sorted(x for x, _ in lines["tps"])
    assert lines["latency_ms"][0] == [1.0, 2.0]


def test_each_run_gets_its_own_buckets_and_gaps_and_infinities_are_left_out(batch):
    short = stored_run(batch, 0, [10.0, None, 30.0])
    odd = stored_run(batch, 1, [5.0, math.inf, float("nan"), 6.0])
    empty = stored_run(batch, 2, [])

    found = timeseries.sample_series([short.pk, odd.pk, empty.pk], buckets=100, metrics=["tps"])

    assert found[short.pk]["tps"] == [[1.0, 10.0], [3.0, 30.0]]
    assert found[odd.pk]["tps"] == [[1.0, 5.0], [4.0, 6.0]]
    assert empty.pk not in found
    assert timeseries.sample_series([], buckets=10) == {}
    with pytest.raises(ValueError, match="not a sample metric"):
        timeseries.sample_series([short.pk], buckets=10, metrics=["raw_log"])


def test_the_timeline_is_each_runs_points_shifted_to_the_batchs_clock_to_the_millisecond(batch):
    first = stored_run(batch, 0, [10.0, 12.5, 11.0])
    second = stored_run(batch, 1, [20.0, 30.0])
    empty = stored_run(batch, 2, [])
    infinite = stored_run(batch, 3, [math.inf, float("nan")])
    Sample.objects.filter(run=second).update(time_s=F("time_s") + 0.25)
    offsets = {first.pk: 0.0, second.pk: 31.2345678, empty.pk: 60.0, infinite.pk: 90.0}

    found = timeseries.timeline_series(offsets, buckets=100)

    # a run without a sample, or without a finite one, has no line
    assert set(found) == {first.pk, second.pk}
    points = {run_id: text.value() for run_id, text in found.items()}
    plain = timeseries.sample_series([first.pk, second.pk], buckets=100, metrics=["tps"])
    assert points[first.pk] == plain[first.pk]["tps"] == [[1.0, 10.0], [2.0, 12.5], [3.0, 11.0]]
    assert points[second.pk] == [[32.485, 20.0], [33.485, 30.0]]  # 32.4845678: to the ms
    assert orjson.loads(json_text.dumps(found)) == {str(k): v for k, v in points.items()}
    assert timeseries.timeline_series({}, buckets=10) == {}


def test_a_counter_is_a_rate_between_readings_and_a_gauge_is_as_read(batch):
    run = stored_run(batch, 0, [1.0])
    readings = [(0.0, {"c": 100, "g": 3}), (2.0, {"c": 300, "g": 5}), (3.0, {"c": 400}),
                (4.0, {"c": "n/a", "g": 4})]  # fmt: skip
    CounterSample.objects.bulk_create(
        CounterSample(run=run, seq=i, time_s=t, values=v) for i, (t, v) in enumerate(readings, 1)
    )

    rates = timeseries.counter_series([run.pk], "c", gauge=False, buckets=100)
    gauges = timeseries.counter_series([run.pk], "g", gauge=True, buckets=100)

    assert rates == {run.pk: [[2.0, 100.0], [3.0, 100.0]]}
    assert gauges == {run.pk: [[0.0, 3.0], [2.0, 5.0], [4.0, 4.0]]}


def test_a_counter_rate_counts_whole_intervals_only(batch):
    """The sampler's last reading comes 0.06 s after the one before, as sysbench ends: a
    rate over it would scale a few rows up to a spike (or a dip) that never happened."""
    run = stored_run(batch, 0, [1.0])
    readings = [(0.0, 0), (1.0, 1000), (2.0, 2100), (3.0, 3000), (3.06, 3400)]
    CounterSample.objects.bulk_create(
        CounterSample(run=run, seq=i, time_s=t, values={"c": v})
        for i, (t, v) in enumerate(readings, 1)
    )

    rates = timeseries.counter_series([run.pk], "c", gauge=False, buckets=100)

    assert rates == {run.pk: [[1.0, 1000.0], [2.0, 1100.0], [3.0, 900.0]]}


def rows_built(
    table: str,
    source: str,
    metrics: Sequence[str],
    run_ids: list[int],
    buckets: int,
    params: dict[str, str],
) -> timeseries.RunSeries:
    """The series as they were read before PostgreSQL wrote them as JSON (issue 39): a
    row of arrays per bucket, made into points by charts.bucket_points."""
    extremes = ", ".join(
        f"min(ARRAY[{m}, x]) FILTER (WHERE {m} > '-Infinity' AND {m} < 'Infinity'), "
        f"max(ARRAY[{m}, x]) FILTER (WHERE {m} > '-Infinity' AND {m} < 'Infinity')"
        for m in metrics
    )
    last_x = f"SELECT time_s FROM {table} WHERE run_id = r.id ORDER BY seq DESC LIMIT 1"  # noqa: S608
    sql = f"""
        SELECT r.id, b.* FROM unnest(%(runs)s::bigint[]) AS r(id)
        CROSS JOIN LATERAL (
            SELECT width_bucket(source.x, 0, greatest(({last_x}), 0) + 0.001, %(buckets)s),
                   {extremes}
            FROM ({source}) AS source GROUP BY 1
        ) AS b
    """  # noqa: S608 - the models' names
    with connection.cursor() as cursor:
        cursor.execute(sql, {**params, "runs": run_ids, "buckets": buckets})
        rows = cursor.fetchall()
    series: timeseries.RunSeries = {}
    for run_id, _bucket, *ends in sorted(rows, key=lambda r: (r[0], r[1])):
        lines = series.setdefault(run_id, {m: [] for m in metrics})
        for i, metric in enumerate(metrics):
            lines[metric] += charts.bucket_points(ends[2 * i], ends[2 * i + 1])
    return series


def test_the_series_written_as_json_by_postgresql_are_the_rows_built_ones(batch):
    """A batch's runs of 600 one-second samples (as bench/benchdata.py makes them: noise,
    stalls, whole and fractional values, times off the second), with gaps, infinities, NaN,
    numbers PostgreSQL writes with an exponent, a run of one sample and one without: every
    series the same, to the bit."""
    noise = random.Random(39)
    runs = []
    for position in range(12):
        tps = [round(noise.uniform(500, 1500), noise.choice([0, 2, 6])) for _ in range(600)]
        tps[noise.randrange(600)] = 0.0
        tps[noise.randrange(600)] = None  # type: ignore[call-overload]
        runs.append(stored_run(batch, position, tps))
    Sample.objects.filter(run=runs[0], seq=7).update(tps=math.inf, qps=float("nan"))
    Sample.objects.filter(run=runs[1]).update(time_s=F("time_s") + 0.37, latency_ms=F("tps") / 7)
    Sample.objects.filter(run=runs[2], seq__gt=1).update(tps=None, qps=None, latency_ms=None)
    for seq, value in enumerate([1e16, 123456789012345.0, 1e-5, -3.0, 2.5e-308, 1e300], 3):
        Sample.objects.filter(run=runs[3], seq=seq).update(tps=value, qps=-value)
    runs.append(stored_run(batch, 12, [42.0]))
    runs.append(stored_run(batch, 13, []))
    for run in runs[:4]:
        CounterSample.objects.bulk_create(
            CounterSample(run=run, seq=i, time_s=i + noise.choice([0.0, 0.02]),
                          values={"c": i * 1000 + noise.randrange(900), "g": noise.random()})
            for i in range(1, 601)
        )  # fmt: skip
    ids = [r.pk for r in runs]

    for buckets in (2, 10, 300, 1000):
        for metrics in (["tps"], list(timeseries.SAMPLE_METRICS)):
            expected = rows_built(
                Sample._meta.db_table, timeseries.sample_source(metrics), metrics, ids, buckets, {}
            )
            found = timeseries.sample_series(ids, buckets=buckets, metrics=metrics)
            assert found == expected and list(found) == list(expected)
            assert all(type(v) is float for lines in found.values() for points in lines.values()
                       for point in points for v in point)  # fmt: skip
        for name, gauge in (("c", False), ("g", True)):
            expected = rows_built(
                CounterSample._meta.db_table, timeseries.counter_source(gauge=gauge), ["counter"],
                ids, buckets, {"name": name},
            )  # fmt: skip
            found_counter = timeseries.counter_series(ids, name, gauge=gauge, buckets=buckets)
            assert found_counter == {run_id: lines["counter"] for run_id, lines in expected.items()}
    assert runs[2].pk in found and found[runs[2].pk]["qps"] == [
        [1.0, 10 * found[runs[2].pk]["tps"][0][1]]
    ]
    assert runs[13].pk not in found
