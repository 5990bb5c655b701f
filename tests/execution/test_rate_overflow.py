"""A rate search tries rates until one fails; sysbench gives up on one far past the load
when its event queue overflows. That try is the search's answer (not held), so it does
not fail the batch; any other failed run still does."""

from __future__ import annotations

import pytest

from runs.execution.runner import _failed_runs
from runs.models import LoadHost, Plan, Run, Status, Target

# sysbench 1.0.20's own line, as a run of the rate search ended with it
OVERFLOW = (
    "FATAL: The event queue is full. This means the worker threads are unable to keep up "
    "with the specified event generation rate"
)


@pytest.mark.django_db
def test_a_rate_searchs_overflowed_tries_do_not_fail_its_batch(make_batch):
    target = Target.objects.create(
        name="db-1", engine="mariadb", host="127.0.0.1", port=3999, database="sbtest",
        user="bench", password="s3cret-target-pw",
    )  # fmt: skip
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name="rate search", target=target, load_host=local, test="oltp_point_select",
        threads=[1], auto={"rate": {"start": 4000}},
    )  # fmt: skip
    batch = make_batch(plan, threads=(1,), repeats=1, samples=3)
    overflowed, lost = list(batch.runs.order_by("position"))[:2]
    overflowed.status, overflowed.error = Status.FAILED, OVERFLOW
    lost.status, lost.error = Status.FAILED, "FATAL: Lost connection to server (2013)"
    Run.objects.bulk_update([overflowed, lost], ["status", "error"])

    counted, left_out = _failed_runs(batch, rate_search=True)
    assert [r.pk for r in counted] == [lost.pk] and left_out == 1

    lost.status, lost.error = Status.DONE, ""
    lost.save(update_fields=["status", "error"])
    assert _failed_runs(batch, rate_search=True) == ([], 1)
    # without a rate search, an overflow is a run that failed
    assert [r.pk for r in _failed_runs(batch, rate_search=False)[0]] == [overflowed.pk]
