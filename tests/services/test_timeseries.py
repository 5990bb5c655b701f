"""Chart series bucketed in PostgreSQL: every run cut into a fixed number of buckets, each
keeping its trough and its peak where they were, whatever the run's length."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from django.utils import timezone

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
