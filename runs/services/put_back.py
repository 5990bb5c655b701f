"""What a batch left on a server that was away at its end, put back once it answers.

A batch whose target went away past the wait (BENCHDASH_TARGET_WAIT_S) ends with its
settings, and its data set, still on the server. They are put back:

- by the sweeper and beat's watch (worker_watch.py), as soon as the target answers: each
  target's tries back off while it is away (BENCHDASH_WATCH_S, doubled at each failure, at
  most BENCHDASH_SWEEP_S: within a sweep of its return), kept in Redis
  (`benchdash:<installation>:put-back`, one field per target);
- or by the worker of the next batch on that target, before it reads the server's
  originals (`left_put_back_before`): a batch that comes first never takes another's
  settings for the server's own.

The batch records when: `settings_restored_at`, its cleanup stage, and a warning with the
tries it took. A later batch that never reached its server (its preflight failed while the
target was away) does not make the earlier one's leftovers its own.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import redis
from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from runs import targets
from runs.execution import groups, liveness, server_targets
from runs.execution.environment import batch_restore_settings
from runs.execution.restarts.leftovers import restarted_put_back, servers_changed
from runs.execution.stream import live
from runs.frozen import FrozenPlan
from runs.models import ACTIVE_STATUSES, FINISHED_STATUSES, Batch, ResourceLock, Target
from runs.targets import TargetError

logger = logging.getLogger(__name__)

RESTORE_WITHIN = timedelta(days=1)  # a target gone for good is not asked for ever


# --- the tries of each target, backed off while it is away -------------------------------


def _key() -> str:
    return f"benchdash:{live.installation()}:put-back"


def _tries(target_id: int) -> dict[str, Any] | None:
    try:
        value = liveness._client().hget(_key(), str(target_id))
    except redis.RedisError:
        return None  # Redis cannot say: tried at every sweep, as before
    return orjson.loads(value) if value else None


def tries_of(target: Target) -> int:
    """How many times the target was tried and did not answer, since it last did."""
    return int((_tries(target.pk) or {}).get("tries", 0))


def due(target: Target) -> bool:
    """Whether the target is to be tried now: never failed, or its back-off is over."""
    tries = _tries(target.pk)
    return tries is None or time.time() >= float(tries["next_at"])


def failed(target: Target) -> None:
    """The target did not answer: the next try after twice the last wait (at most a
    sweep)."""
    tries = _tries(target.pk) or {"tries": 0, "first_at": time.time()}
    # the exponent capped: a target away a day is tried some 1,400 times, and 2 ** 1,100
    # is past what a float holds (OverflowError)
    doubled = settings.BENCHDASH_WATCH_S * 2 ** min(tries["tries"], 16)
    wait = min(doubled, settings.BENCHDASH_SWEEP_S)
    tries = {**tries, "tries": tries["tries"] + 1, "next_at": time.time() + wait}
    try:
        liveness._client().hset(_key(), str(target.pk), orjson.dumps(tries))
    except redis.RedisError as e:
        logger.debug("tries of target %s not kept: %s", target.pk, e)


def answered(target: Target) -> str:
    """The target answered: how many tries failed before, in words. Its tries are
    forgotten at the end of the pass (`leftovers_put_back`): its data set is told the same."""
    tries = _tries(target.pk)
    _answered().add(target.pk)
    if not tries:
        return ""
    first = f"{datetime.fromtimestamp(tries['first_at'], tz=UTC):%H:%M:%S}"
    return f" ({tries['tries']} tries while it was away, the first at {first} UTC)"


# The targets that answered in this thread's pass: the housekeeper runs the sweep and the
# watch in two threads at once.
_PASS = threading.local()


def _answered() -> set[int]:
    if not hasattr(_PASS, "answered"):
        _PASS.answered = set()
    return _PASS.answered


def leftovers_put_back() -> tuple[list[int], list[int]]:
    """One pass of the sweeper's or the watch's: settings, then data sets, of the batches
    whose targets are due; the batches restored, and those whose data set was dropped."""
    answered = _answered()
    answered.clear()  # only this pass's: a direct call of one of them left its own
    started = time.time()
    restored = batches_restore_left_settings()
    dropped = batches_drop_left_datasets()
    with contextlib.suppress(redis.RedisError):
        done = {str(pk) for pk in answered} | _nothing_waits(started)
        if done:
            liveness._client().hdel(_key(), *done)
    answered.clear()
    return restored, dropped


def _nothing_waits(started: float) -> set[str]:
    """The targets that were due when the pass began and that it neither tried nor heard:
    nothing of theirs is left to put back (another batch used the server, the next
    batch's worker put it back, the batch is past RESTORE_WITHIN or the target deleted).
    Kept, they would keep beat sending the watch every few seconds, and a later outage
    would start from their old count."""
    entries = liveness._client().hgetall(_key())
    return {
        (name.decode() if isinstance(name, bytes) else name)
        for name, value in entries.items()
        if float(orjson.loads(value).get("next_at", 0)) <= started
    }


def pending() -> bool:
    """Whether some target's put-back waits for it to answer (one Redis read)."""
    try:
        return bool(liveness._client().hlen(_key()))
    except redis.RedisError:
        return False


def forget_tries() -> None:
    with contextlib.suppress(redis.RedisError):
        liveness._client().delete(_key())


# --- the sweeper's ------------------------------------------------------------------------


def _left() -> QuerySet[Batch]:
    return Batch.objects.filter(
        status__in=FINISHED_STATUSES,
        target__isnull=False,
        started_at__isnull=False,
        finished_at__gte=timezone.now() - RESTORE_WITHIN,
    ).select_related("target")


def batches_restore_left_settings() -> list[int]:
    """Put back the settings of finished batches that could not restore them (their
    target was away at their end), once the target answers again. Only while no other
    batch has used that target since: its settings are then that batch's business."""
    restored = []
    left = _left().filter(settings_restored_at__isnull=True, original_settings__isnull=False)
    for batch in left.exclude(original_settings={}):
        assert batch.target is not None
        # One that never read its server's originals (null) has nothing to restore: it
        # said "restored" at every sweep, and told a target away as back.
        if not batch.original_settings:
            continue
        if target_used_since(batch) or not due(batch.target):
            continue
        try:
            batch_restore_settings(batch=batch)
        except TargetError:
            failed(batch.target)
            continue  # still away: tried again once its back-off is over
        tries = answered(batch.target)
        at = f"{timezone.now():%Y-%m-%d %H:%M:%S} UTC"
        batch.warnings = [
            *batch.warnings,
            f"the server's settings {batch.original_settings} were restored at {at}, "
            f"once the target was back{tries}",
        ]
        batch.save(update_fields=["warnings"])
        logger.info("batch %s: settings left on the target restored at %s", batch.pk, at)
        restored.append(batch.pk)
    return restored


def batches_drop_left_datasets() -> list[int]:
    """Drop the data sets that finished batches left on their target (it was away at
    their end, or their load host was), once the target answers again: only the tables
    its marker says this batch prepared, and only while no other batch used it since."""
    dropped = []
    for batch in _left():
        if not FrozenPlan.from_params(batch.params).cleanup:
            continue
        # A servers axis: each target's data set (its stage says which target).
        if any([_drop_left(batch, prepare) for prepare in groups.stages_left(batch)]):
            dropped.append(batch.pk)
    return dropped


def _stage_target(batch: Batch, prepare: dict[str, Any]) -> Target | None:
    if prepare.get("target") not in (None, batch.target_id):
        return Target.objects.filter(pk=prepare["target"]).first()
    return batch.target


def _drop_left(batch: Batch, prepare: dict[str, Any], by: Batch | None = None) -> bool:
    target = _stage_target(batch, prepare)
    if target is None or target_used_since(batch, target, by=by):
        return False
    if by is None and not due(target):
        return False
    try:
        tables = _drop_own_dataset(batch, target)
    except TargetError:
        if by is None:
            failed(target)
        return False  # still away: tried again once its back-off is over
    tries = answered(target) if by is None else ""
    if tables is None:
        return False  # the marker names another batch, or none: not this batch's tables
    at = f"{timezone.now():%Y-%m-%d %H:%M:%S} UTC"
    who = "the sweeper" if by is None else f"the worker of batch {by.pk}, before it began"
    reason = f"dropped by {who} at {at}, once the target was back{tries}"
    groups.stage_dropped_later(batch, prepare, reason=reason, dropped=tables)
    where = f" on {target.name}" if "target" in prepare else ""
    before = "" if by is None else f", before batch {by.pk} used it"
    said = f"the data set it left{where} was dropped at {at}{before}"
    batch.warnings = [*batch.warnings, said]
    batch.save(update_fields=["warnings"])
    logger.info("batch %s: data set %s left on %s dropped at %s", batch.pk, tables, target, at)
    return True


def _drop_own_dataset(batch: Batch, target: Target) -> list[str] | None:
    with targets.connect_to(target) as db:
        marker = db.dataset_marker()
        if marker is None or str(marker.get("batch_id")) != str(batch.pk):
            return None
        return db.dataset_drop()


def target_used_since(batch: Batch, target: Target | None = None, by: Batch | None = None) -> bool:
    """Whether another batch (not `by`) used the target (the batch's own by default) since:
    as its own target or as one of its servers axis (its lock). A later batch that never
    reached the server (no environment recorded: its preflight failed while the target
    was away) did not."""
    target = target or batch.target
    others = Batch.objects.exclude(pk__in=[batch.pk, getattr(by, "pk", None) or 0])
    later = others.filter(
        target=target, started_at__gt=batch.started_at, environment__has_key="load_host"
    )
    busy = others.filter(target=target, status__in=ACTIVE_STATUSES)
    held = ResourceLock.objects.filter(resource=f"target:{getattr(target, 'pk', None)}").exclude(
        batch__in=[batch] + ([by] if by is not None else [])
    )
    return later.exists() or busy.exists() or held.exists()


# --- the next batch's worker's ------------------------------------------------------------


def left_put_back_before(batch: Batch) -> list[str]:
    """Before the batch reads its servers' originals: what earlier batches left on them
    (settings, a changed config, a data set) put back. What the batch says of it."""
    said = []
    ids = {i for i in (batch.target_id, *server_targets.target_ids(batch)) if i is not None}
    earlier = _left().filter(target_id__in=ids, started_at__lt=batch.started_at)
    for left in earlier.order_by("-started_at"):
        try:
            if _put_back_for(left, batch):
                said.append(f"put back first what batch {left.pk} left on its server")
        except TargetError as e:
            logger.info("batch %s: what batch %s left not put back: %s", batch.pk, left.pk, e)
    return said


def _put_back_for(left: Batch, by: Batch) -> bool:
    settings_left = left.settings_restored_at is None and bool(left.original_settings)
    changed = servers_changed(left)
    stages = groups.stages_left(left) if FrozenPlan.from_params(left.params).cleanup else []
    if not (settings_left or changed or stages):
        return False  # nothing left (most batches): no query of the server or the database
    if target_used_since(left, by=by):
        return False  # a batch in between made the server's state its own
    done = False
    at = f"{timezone.now():%Y-%m-%d %H:%M:%S} UTC"
    if changed and not restarted_put_back(
        batch=left, reason=f"the worker of batch {by.pk}, before it began"
    ):
        done = True
    if settings_left:
        batch_restore_settings(batch=left)
        left.warnings = [
            *left.warnings,
            f"the server's settings {left.original_settings} were restored at {at}, "
            f"once the target was back, before batch {by.pk} used it",
        ]
        left.save(update_fields=["warnings"])
        done = True
    return any([_drop_left(left, prepare, by=by) for prepare in stages]) or done
