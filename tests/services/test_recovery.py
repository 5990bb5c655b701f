"""Handing a batch over twice is harmless: the claim is a conditional update, so the
sweeper may re-send a batch whose message only seems lost. Real workers, two slots."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings

from benchdash import broker
from runs.models import Plan, Status
from runs.services import batches, recovery
from runs.services.queue import enqueue_batch
from tests.helpers import wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def benchmarks_queued() -> int:
    # The installation's queue (benchdash/broker.py).
    return int(redis.Redis.from_url(settings.REDIS_URL).llen(broker.key_prefix() + "benchmarks"))


def test_a_batch_delivered_three_times_runs_once(two_celery_workers, local_host, settings):
    plan = Plan.objects.create(
        name="cpu", load_host=local_host, test="cpu", threads=[1, 2],
        options={"time": 2, "report-interval": 1, "cpu-max-prime": 2000},
    )  # fmt: skip
    batch = batches.batch_launch(plan=plan, launched_by="cli")
    settings.BENCHDASH_QUEUED_GRACE_SECONDS = 0
    enqueue_batch(batch.pk)  # a slow message and the sweeper's second one
    assert recovery.batches_requeue_lost() in ([batch.pk], [])  # unless already claimed

    batch = wait_for_batch(batch, timeout=120)
    assert batch.status == Status.DONE, batch.error
    runs = list(batch.runs.order_by("position"))
    assert [r.status for r in runs] == [Status.DONE, Status.DONE]
    for run in runs:
        assert run.raw_log.count("General statistics:") == 1
        seqs = list(run.samples.values_list("seq", flat=True))
        assert seqs == list(range(1, len(seqs) + 1)) and seqs
    ran = [(r.started_at, r.finished_at) for r in runs]

    # Delivered again once it is over: nothing runs.
    enqueue_batch(batch.pk)
    wait_until(lambda: benchmarks_queued() == 0, timeout=30, what="the message to be taken")
    batch.refresh_from_db()
    assert batch.status == Status.DONE
    assert [(r.started_at, r.finished_at) for r in batch.runs.order_by("position")] == ran
