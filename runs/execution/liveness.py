"""The heartbeats of benchdash's own processes, in Redis: each worker, beat and the sweeper.

One Redis hash per installation, one field per process, each a small JSON object with the
time it was written (`at`, seconds since the epoch). They need Redis only, so they go on
through an outage of the results database: the sweeper asks here whether a batch's worker
is alive before it takes a silent batch for one whose worker died, and the health page
(runs/services/health.py) reads them all. Each is at most one write every
BENCHDASH_PROCESS_BEAT_S: an idle installation stays cheap.

Fields: `worker:<name@machine>` (its queues, pid, machine), written by a thread each
worker starts when it is ready and removed when it shuts down; `beat`, written by beat's
scheduler (benchdash/beat.py) as it ticks; `sweeper`, written at the end of each sweep
with what it did.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from functools import cache
from typing import Any

import orjson
import redis
from django.conf import settings

from runs.execution.stream import live

logger = logging.getLogger(__name__)

WORKER = "worker:"
BEAT = "beat"
SWEEPER = "sweeper"


def _key() -> str:
    return f"benchdash:{live.installation()}:heartbeats"


@cache
def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def process_beat(*, name: str, report: dict[str, Any] | None = None) -> None:
    """The process `name` is alive now, with what it says about itself: one HSET. A
    Redis that cannot be reached is only logged: a heartbeat never stops its process."""
    value = {**(report or {}), "at": time.time()}
    try:
        _client().hset(_key(), name, orjson.dumps(value))
    except redis.RedisError as e:
        logger.debug("heartbeat of %s not written: %s", name, e)


def process_forget(*, name: str) -> None:
    with contextlib.suppress(redis.RedisError):
        _client().hdel(_key(), name)


def heartbeats_read() -> dict[str, dict[str, Any]]:
    """Field -> report, each with `age_s`; raises redis.RedisError when Redis is away."""
    now = time.time()
    reports = {}
    for name, value in _client().hgetall(_key()).items():
        report = orjson.loads(value)
        report["age_s"] = max(0.0, now - float(report.get("at", 0)))
        reports[name.decode() if isinstance(name, bytes) else name] = report
    return reports


def is_gone(report: dict[str, Any] | None) -> bool:
    """Never beat, or silent for longer than BENCHDASH_STALE_AFTER_SECONDS."""
    return report is None or report["age_s"] > settings.BENCHDASH_STALE_AFTER_SECONDS


def worker_alive(*, worker: str, batch_id: int) -> bool:
    """Whether the worker `name@machine` beat lately while running the batch: a worker
    restarted under the same name does not count for its predecessor's batch. False when
    Redis cannot say: then the batch's own heartbeat decides, as before workers beat."""
    try:
        value = _client().hget(_key(), WORKER + worker)
    except redis.RedisError:
        return False
    if value is None:
        return False
    report = orjson.loads(value)
    report["age_s"] = time.time() - float(report.get("at", 0))
    if batch_id in report.get("batches", []):
        # Busy, it beats every BENCHDASH_BUSY_BEAT_S: silent this long, it died.
        return report["age_s"] <= settings.BENCHDASH_WORKER_GONE_AFTER_S
    return False


def workers_gone_busy() -> dict[str, list[int]]:
    """The workers that fell silent while running batches (worker -> its batches): their
    last beat listed batches and is older than BENCHDASH_WORKER_GONE_AFTER_S. One Redis
    read; raises redis.RedisError when Redis is away."""
    gone = {}
    for name, report in heartbeats_read().items():
        batches = report.get("batches") or []
        silent = report["age_s"] > settings.BENCHDASH_WORKER_GONE_AFTER_S
        if name.startswith(WORKER) and batches and silent:
            gone[name.removeprefix(WORKER)] = [int(b) for b in batches]
    return gone


# The batches this process runs now (a benchmarks worker runs its batch in its own process,
# solo pool, or in threads): its heartbeat says them.
RUNNING: set[int] = set()
# Set when RUNNING changes: the heartbeat says so at once, not at its next idle beat.
_CHANGED = threading.Event()


@contextlib.contextmanager
def batch_running(batch_id: int) -> Iterator[None]:
    RUNNING.add(batch_id)
    _CHANGED.set()
    try:
        yield
    finally:
        RUNNING.discard(batch_id)
        _CHANGED.set()


class WorkerHeartbeat:
    """A worker's heartbeat: a daemon thread of its main process, beating whatever the
    worker does (a benchmark, a wait for a quiet host, a target or the database)."""

    _running: dict[str, WorkerHeartbeat] = {}

    def __init__(self, worker: str, queues: list[str]) -> None:
        self.name = WORKER + worker
        self.report = {"queues": queues, "pid": os.getpid(), "machine": socket.gethostname()}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    @classmethod
    def start(cls, *, worker: str, queues: list[str]) -> None:
        if worker in cls._running:
            return  # one thread per worker, however often it says it is ready
        heartbeat = cls._running[worker] = cls(worker, queues)
        heartbeat._thread.start()

    @classmethod
    def stop(cls, *, worker: str) -> None:
        heartbeat = cls._running.pop(worker, None)
        if heartbeat is not None:
            heartbeat._stop.set()
            _CHANGED.set()
            heartbeat._thread.join(timeout=5)
            process_forget(name=heartbeat.name)

    def _loop(self) -> None:
        while not self._stop.is_set():
            process_beat(name=self.name, report={**self.report, "batches": sorted(RUNNING)})
            # Idle, a beat every PROCESS_BEAT_S (an idle installation stays cheap); busy,
            # every BUSY_BEAT_S, so that its death is seen within seconds (worker_watch.py).
            every = settings.BENCHDASH_BUSY_BEAT_S if RUNNING else settings.BENCHDASH_PROCESS_BEAT_S
            _CHANGED.wait(every)
            _CHANGED.clear()
