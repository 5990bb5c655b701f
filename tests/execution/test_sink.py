"""The sample sink's writes can be repeated: a write whose answer was lost with the
database, or samples the sweeper already stored from Redis, are skipped, not doubled."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from runs.execution.sink import LiveSample, counters_copy, samples_copy
from runs.models import Batch, Run

pytestmark = pytest.mark.django_db


def live_sample(run: Run, seq: int, tps: float) -> LiveSample:
    return LiveSample(
        run_id=run.pk, seq=seq, time_s=float(seq), threads=2, tps=tps, qps=tps * 20,
        reads=tps * 14, writes=tps * 4, other=tps * 2, latency_pct=95.0, latency_ms=3.1,
        errors_per_s=0.0, reconnects_per_s=0.0, in_warmup=False,
        extra={"read_mib_per_s": 1.5} if seq == 2 else {}, received_at=timezone.now(),
    )  # fmt: skip


@pytest.fixture
def run() -> Run:
    batch = Batch.objects.create(label="sink", params={}, seed=0, launched_by="cli")
    return Run.objects.create(batch=batch, position=0, round=0, cell_key="c", threads=2)


def test_samples_already_stored_are_skipped_and_the_new_ones_stored(run):
    first = [live_sample(run, seq, 100.0 + seq) for seq in (1, 2, 3)]
    with transaction.atomic():
        samples_copy(first)

    # Written again with one more: as after a lost answer, in the same transaction too.
    with transaction.atomic():
        samples_copy([*first, live_sample(run, 4, 104.0)])
        samples_copy([live_sample(run, 4, 999.0)])

    stored = list(run.samples.order_by("seq").values_list("seq", "tps", "extra"))
    assert stored == [
        (1, 101.0, {}),
        (2, 102.0, {"read_mib_per_s": 1.5}),
        (3, 103.0, {}),
        (4, 104.0, {}),
    ]


def test_counter_readings_already_stored_are_skipped(run):
    readings = [(1, 1.0, {"Questions": 10.0}), (2, 2.0, {"Questions": 25.0})]
    with transaction.atomic():
        counters_copy(run.pk, readings)
    with transaction.atomic():
        counters_copy(run.pk, [*readings, (3, 3.0, {"Questions": 41.5})])

    stored = list(run.counter_samples.order_by("seq").values_list("seq", "time_s", "values"))
    assert stored == [
        (1, 1.0, {"Questions": 10.0}),
        (2, 2.0, {"Questions": 25.0}),
        (3, 3.0, {"Questions": 41.5}),
    ]
