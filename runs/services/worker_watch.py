"""A worker that died mid-batch, found within seconds: beat looks every BENCHDASH_WATCH_S
(`worth_a_look`, Redis only, in beat's own tick) and sends `watch_workers` when it finds one.

The sweeper (recovery.py) finds every stale batch, but once a minute and only after
BENCHDASH_STALE_AFTER_SECONDS: a cell's settings would stay on its server for up to 90 s
after its worker was killed. A worker beats in Redis every BENCHDASH_BUSY_BEAT_S while it
runs a batch (runs/execution/liveness.py); here one Redis read finds a busy worker silent
for BENCHDASH_WORKER_GONE_AFTER_S, and its batches are recovered at once, as the sweeper
would (its sysbench killed, its cell's settings and server put back, the batch queued
again). Nothing busy, nothing silent: no query of the results database. The same tick
tries the targets whose put-back waits for them to answer (put_back.py), on their back-off.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import redis
from django.conf import settings
from django.utils import timezone

from runs.execution import liveness
from runs.services import put_back
from runs.services.recovery import batch_recover

logger = logging.getLogger(__name__)


def worth_a_look() -> bool:
    """Whether a busy worker fell silent or a target's put-back waits (Redis reads only):
    beat sends the watch's task only then, so that an idle installation pays for neither
    a message nor a task every few seconds."""
    try:
        return bool(liveness.workers_gone_busy()) or put_back.pending()
    except redis.RedisError:
        return False  # the sweeper, from the batches' own heartbeats, covers it


def batches_of_dead_workers(*, hostname: str) -> list[int]:
    """Recover the batches of the workers that fell silent while running them; the ids
    recovered. A batch whose own heartbeat is recent, or whose worker beats again, is left
    to it (batch_recover asks again); one already recovered is not found again (a cheap
    query while the dead worker's last beat stays, until a worker of its name beats)."""
    try:
        gone = liveness.workers_gone_busy()
    except redis.RedisError as e:
        logger.debug("workers not watched, Redis cannot be read: %s", e)
        return []  # the sweeper, from the batches' own heartbeats, covers it
    cutoff = timezone.now() - timedelta(seconds=settings.BENCHDASH_WORKER_GONE_AFTER_S)
    recovered = []
    for worker, batch_ids in gone.items():
        for batch_id in batch_ids:
            if batch_recover(batch_id, cutoff, hostname):
                logger.warning("batch %s: its worker %s died; recovered at once", batch_id, worker)
                recovered.append(batch_id)
    # After the dead workers' cells: a target away makes this wait for its connection.
    if put_back.pending():  # a target away at a batch's end: tried on its back-off
        put_back.leftovers_put_back()
    return recovered
