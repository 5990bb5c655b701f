"""The Server-Sent Events of a run, for the pages: what is stored, then what the worker
publishes live (runs/execution/stream/live.py), each sample exactly once and in order.

Redis only carries what is live: a finished run is replayed from the database alone, and
a running one whose Redis cannot be reached is followed by reading the database every
second. A sample that comes from Redis after a gap (Redis restarted and lost its recent
list, or missed a publish) is held until the gap is filled from the database, where the
worker stores every sample at its next heartbeat; a gap the database cannot fill in time
is told to the viewer (a `gap` event), never skipped silently.

Each read hands its database connection back at once: a stream lasts as long as
its run, and must not hold one of the web server's few connections meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection
from redis.exceptions import RedisError

from runs.execution.stream.live import channel, recent_key, sample_payload, status_payload
from runs.models import FINISHED_STATUSES, Run, Sample

logger = logging.getLogger(__name__)

KEEPALIVE_S = 15.0
POLL_S = 1.0  # how often the database is read while Redis is away


def gap_wait_s() -> float:
    """How long a gap in the live samples waits for the database: the worker stores what
    it holds at each heartbeat, so two of them and a read."""
    return 2 * float(settings.BENCHDASH_HEARTBEAT_SECONDS) + POLL_S


T = TypeVar("T")


def _sse(event: str, data: dict[str, Any], event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data)}\n\n"


# What the run's chart shows of a sample: a finished run's stream sends only these.
SHOWN_FIGURES = ("seq", "time_s", "tps", "qps", "latency_ms", "latency_pct")


async def finished_events(run_id: int, *, after: int = 0) -> tuple[bool, str | None]:
    """(whether the run exists, and when it is finished its whole stream at once): its
    status, each sample after `after` with what the page shows of it, and `end`. The web
    server compresses it like a page: 3,600 samples are some 60 kB gzipped instead of the
    1.24 MB they were as they went live. A run not finished is followed live (None)."""
    found = await sync_to_async(_finished)(run_id, after)
    if not isinstance(found, tuple):
        return found, None
    status, rows = found
    parts = [_sse("status", status)]
    for row in rows:
        sample = dict(zip(SHOWN_FIGURES, row, strict=True))
        data = json.dumps(sample, separators=(",", ":"))
        parts.append(f"id: {sample['seq']}\nevent: sample\ndata: {data}\n\n")
    parts.append(_sse("end", {}))
    return True, "".join(parts)


async def run_events(run_id: int, *, after: int = 0) -> AsyncIterator[str]:
    """The SSE stream of a run: its status, every sample after `after` exactly once and
    in order, the raw lines as they come, and an `end` event when the run is over."""
    stream = _RunStream(run_id, after)
    status = await _read(_status_of, run_id)
    if status in FINISHED_STATUSES:
        async for chunk in stream.stored():
            yield chunk
        yield _sse("end", {})
        return
    async for chunk in stream.live():
        yield chunk


class _RunStream:
    def __init__(self, run_id: int, after: int) -> None:
        self.run_id = run_id
        self.last_seq = after
        self.status: dict[str, Any] | None = None
        self.finished = False

    async def stored(self) -> AsyncIterator[str]:
        """The status and the samples the database holds after the last one sent."""
        status, samples = await _read(_stored, self.run_id, self.last_seq)
        self.finished = status["status"] in FINISHED_STATUSES
        if status != self.status:
            self.status = status
            yield _sse("status", status)
        for payload in samples:
            chunk = self._sample(payload)
            if chunk:
                yield chunk

    async def live(self) -> AsyncIterator[str]:
        """Subscribe first, then replay what is stored and the recent list, then follow
        the channel: nothing falls in between. Without Redis, read the database."""
        client = aioredis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=KEEPALIVE_S + 5
        )
        pubsub = client.pubsub()
        try:
            await pubsub.subscribe(channel(self.run_id))
            async for chunk in self.stored():
                yield chunk
            recent = await client.lrange(recent_key(self.run_id), 0, -1)
            async for chunk in self.live_samples([json.loads(raw)["sample"] for raw in recent]):
                yield chunk
            if self.finished:
                yield _sse("end", {})
                return
            async for chunk in self.follow(pubsub):
                yield chunk
        except (RedisError, OSError) as e:
            logger.warning("run %s: no live events from Redis (%s): reading the database",
                           self.run_id, e)  # fmt: skip
            async for chunk in self.poll():
                yield chunk
        finally:
            await _quietly(pubsub.aclose())
            await _quietly(client.aclose())

    async def follow(self, pubsub: Any) -> AsyncIterator[str]:
        while True:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=KEEPALIVE_S)
            if message is None:
                if await self._ended_silently():
                    yield _sse("end", {})
                    return
                yield ": keepalive\n\n"
                continue
            event = json.loads(message["data"])
            if event["type"] == "samples":  # those of one read of sysbench's output
                async for chunk in self.live_samples(event["samples"]):
                    yield chunk
            elif event["type"] == "lines":
                yield _sse("lines", {"lines": event["lines"]})
            elif event["type"] == "host_metrics":
                # The machines' new seconds (HostMetrics rows): live only; the page reads
                # the stored ones from /api/v1/runs/<id>/host-metrics.
                yield _sse("host_metrics", {"rows": event["rows"]})
            elif event["type"] == "host_sample":
                # One load host's own sample of a cell run from several hosts: live only.
                yield _sse("host_sample", {k: v for k, v in event.items() if k != "type"})
            elif event["type"] == "status":
                yield _sse("status", {k: v for k, v in event.items() if k != "type"})
                if event["status"] in FINISHED_STATUSES:
                    yield _sse("end", {})
                    return

    async def poll(self) -> AsyncIterator[str]:
        """Follow the run in the database alone (no raw lines: only Redis carries them)."""
        quiet_since = time.monotonic()
        while True:
            async for chunk in self.stored():
                quiet_since = time.monotonic()
                yield chunk
            if self.finished:
                yield _sse("end", {})
                return
            if time.monotonic() - quiet_since > KEEPALIVE_S:
                quiet_since = time.monotonic()
                yield ": keepalive\n\n"
            await asyncio.sleep(POLL_S)

    async def live_samples(self, payloads: list[dict[str, Any]]) -> AsyncIterator[str]:
        """Samples from Redis, each after the ones before it: a gap is filled first."""
        for payload in payloads:
            if int(payload["seq"]) > self.last_seq + 1:
                async for chunk in self.fill(int(payload["seq"])):
                    yield chunk
            chunk = self._sample(payload)
            if chunk:
                yield chunk

    async def fill(self, before: int) -> AsyncIterator[str]:
        """The samples after the last one sent and before `before`, from the database:
        waited for until the worker stored them, or told as a gap."""
        deadline = time.monotonic() + gap_wait_s()
        while True:
            samples = await _read(_stored_between, self.run_id, self.last_seq, before)
            if len(samples) == before - self.last_seq - 1 or time.monotonic() > deadline:
                break
            await asyncio.sleep(POLL_S)
        for payload in samples:
            chunk = self._sample(payload)
            if chunk:
                yield chunk
        if self.last_seq < before - 1:
            gap = {"after": self.last_seq, "before": before, "missing": before - self.last_seq - 1}
            logger.warning("run %s: live samples %s", self.run_id, gap)
            yield _sse("gap", gap)

    def _sample(self, payload: dict[str, Any]) -> str:
        seq = int(payload["seq"])
        if seq <= self.last_seq:
            return ""  # already sent: replayed from the database and seen again live
        self.last_seq = seq
        return _sse("sample", payload, event_id=seq)

    async def _ended_silently(self) -> bool:
        # A worker that died publishes no final status; the sweeper records it.
        status = await _read(_status_of, self.run_id)
        return status is None or status in FINISHED_STATUSES


# --- database reads, each on a connection handed back at once --------------------------------


async def _read(read: Callable[..., T], *args: Any) -> T:
    return await sync_to_async(_closing)(read, *args)


def _closing(read: Callable[..., T], *args: Any) -> T:
    try:
        return read(*args)
    finally:
        connection.close()


def _status_of(run_id: int) -> str | None:
    return Run.objects.filter(pk=run_id).values_list("status", flat=True).first()


def _stored(run_id: int, after: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    # The status is read first: a run that had ended by then has stored every sample.
    run = Run.objects.only("status", "error", "error_hint", "started_at", "finished_at").get(
        pk=run_id
    )
    samples = Sample.objects.filter(run_id=run_id, seq__gt=after).order_by("seq")
    return status_payload(run), [sample_payload(s) for s in samples]


def _finished(run_id: int, after: int) -> tuple[dict[str, Any], list[tuple[Any, ...]]] | bool:
    """A finished run's status and samples (its answer hands the connection back as any
    page does); for a run that is not, whether it exists, and the connection handed back
    now: its stream may last as long as the run."""
    run = Run.objects.only("status", "error", "error_hint", "started_at", "finished_at")
    found = run.filter(pk=run_id).first()
    if found is None or found.status not in FINISHED_STATUSES:
        connection.close()
        return found is not None
    # The status was read first: a run that had ended by then has stored every sample.
    samples = Sample.objects.filter(run_id=run_id, seq__gt=after).order_by("seq")
    return status_payload(found), list(samples.values_list(*SHOWN_FIGURES))


def _stored_between(run_id: int, after: int, before: int) -> list[dict[str, Any]]:
    samples = Sample.objects.filter(run_id=run_id, seq__gt=after, seq__lt=before).order_by("seq")
    return [sample_payload(s) for s in samples]


async def _quietly(closing: Any) -> None:
    with contextlib.suppress(RedisError, OSError):
        await closing
