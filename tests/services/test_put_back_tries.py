"""The put-back's tries of each target in Redis (runs/services/put_back.py): backed off at
most a sweep however long the target stays away, and forgotten once nothing waits for it,
so that beat stops sending the watch and a later outage starts its count afresh."""

from __future__ import annotations

import time

import orjson
import pytest
from django.conf import settings

from runs.execution import liveness
from runs.models import Target
from runs.services import put_back, worker_watch

pytestmark = pytest.mark.django_db


@pytest.fixture
def target() -> Target:
    return Target.objects.create(
        name="away", engine="mariadb", host="127.0.0.1", port=1, database="sbtest", user="u"
    )


def _set_tries(target: Target, **tries: float) -> None:
    liveness._client().hset(put_back._key(), str(target.pk), orjson.dumps(tries))


def test_a_target_away_a_day_is_tried_again_within_a_sweep(target):
    # some 1,400 failed tries in a day at one a sweep: 2 ** 1,400 is no float
    _set_tries(target, tries=1400, first_at=time.time() - 86000, next_at=0)

    put_back.failed(target)

    tries = put_back._tries(target.pk)
    assert tries is not None and tries["tries"] == 1401
    assert tries["next_at"] <= time.time() + settings.BENCHDASH_SWEEP_S
    put_back.forget_tries()


def test_a_target_nothing_is_left_on_is_forgotten_by_the_next_pass(target):
    # due, but no batch of it waits (the next batch's worker put its leftovers back)
    _set_tries(target, tries=3, first_at=time.time() - 100, next_at=time.time() - 1)
    assert put_back.pending() and worker_watch.worth_a_look()

    put_back.leftovers_put_back()

    assert not put_back.pending()
    assert not worker_watch.worth_a_look()


def test_a_target_in_its_back_off_is_kept(target):
    _set_tries(target, tries=3, first_at=time.time() - 100, next_at=time.time() + 30)

    put_back.leftovers_put_back()

    assert put_back.pending() and put_back.tries_of(target) == 3
    put_back.forget_tries()
