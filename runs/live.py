"""Live events of a run over Redis: the worker publishes, Server-Sent Events subscribe.

A sample is published the moment its line is parsed, before it is written to the
database (that follows within a second). To let a client join at any moment without a gap
or a duplicate, each sample is also pushed to a short per-run list before it is published.
A subscriber first subscribes, then replays the stored samples and the short list, then
follows the channel, dropping every sequence number it has already sent: anything pushed
before the replay is in the list, anything after it arrives on the channel.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterable
from functools import cache
from typing import Any

import redis
import redis.asyncio as aioredis
from django.conf import settings

from runs.models import FINISHED_STATUSES, SAMPLE_FIGURES, Run, Sample

logger = logging.getLogger(__name__)

RECENT_SAMPLES = 200  # far more than can wait for the database (< 1 s of samples)
RECENT_TTL_S = 24 * 3600
KEEPALIVE_S = 15.0


def channel(run_id: int) -> str:
    return f"benchdash:run:{run_id}"


def recent_key(run_id: int) -> str:
    return f"benchdash:run:{run_id}:recent"


def sample_payload(sample: Sample) -> dict[str, Any]:
    payload = {name: getattr(sample, name) for name in SAMPLE_FIGURES}
    payload.update(sample.extra or {})
    # When the worker read the line (epoch seconds): lets a client measure its lag.
    payload["received_at"] = sample.received_at.timestamp()
    return payload


@cache
def _client() -> redis.Redis:
    # Short timeouts: a slow or absent Redis must never stall a benchmark.
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2, health_check_interval=30
    )


def _publish(run_id: int, events: Iterable[dict[str, Any]], recent: list[str]) -> None:
    try:
        pipe = _client().pipeline(transaction=True)
        if recent:
            pipe.rpush(recent_key(run_id), *recent)
            pipe.ltrim(recent_key(run_id), -RECENT_SAMPLES, -1)
            pipe.expire(recent_key(run_id), RECENT_TTL_S)
        for event in events:
            pipe.publish(channel(run_id), json.dumps(event))
        pipe.execute()
    except redis.RedisError as e:
        # Live display is a convenience; the database keeps every sample regardless.
        logger.warning("run %s: live events not published: %s", run_id, e)


def publish_sample(run_id: int, sample: Sample) -> None:
    event = {"type": "sample", "sample": sample_payload(sample)}
    _publish(run_id, [event], [json.dumps(event)])


def publish_lines(run_id: int, lines: list[str]) -> None:
    if lines:
        _publish(run_id, [{"type": "lines", "lines": lines}], [])


def publish_start(run: Run) -> None:
    """A run begins: forget any list left under its id (a recreated database reuses ids)."""
    try:
        _client().delete(recent_key(run.pk))
    except redis.RedisError as e:
        logger.warning("run %s: live events not reset: %s", run.pk, e)
    publish_status(run)


def publish_status(run: Run) -> None:
    _publish(run.pk, [{"type": "status", **status_payload(run)}], [])


def status_payload(run: Run) -> dict[str, Any]:
    return {
        "status": run.status,
        "error": run.error,
        "hint": run.error_hint,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


# --- Server-Sent Events ---------------------------------------------------------------------


def _sse(event: str, data: dict[str, Any], event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data)}\n\n"


async def run_events(run_id: int, *, after: int = 0) -> AsyncIterator[str]:
    """The SSE stream of a run: its status, every sample after `after` exactly once and
    in order, the raw lines as they come, and an `end` event when the run is over."""
    client = aioredis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=5)
    pubsub = client.pubsub()
    try:
        await pubsub.subscribe(channel(run_id))
        stream = _RunStream(run_id, after)
        async for chunk in stream.replay(client):
            yield chunk
        if stream.finished:
            yield _sse("end", {})
            return
        async for chunk in stream.follow(pubsub):
            yield chunk
    finally:
        await pubsub.aclose()
        await client.aclose()


class _RunStream:
    def __init__(self, run_id: int, after: int) -> None:
        self.run_id = run_id
        self.last_seq = after
        self.finished = False

    async def replay(self, client: aioredis.Redis) -> AsyncIterator[str]:
        run = await Run.objects.aget(pk=self.run_id)
        yield _sse("status", status_payload(run))
        self.finished = run.status in FINISHED_STATUSES
        stored = Sample.objects.filter(run_id=self.run_id, seq__gt=self.last_seq).order_by("seq")
        async for sample in stored:
            yield self._sample(sample_payload(sample))
        for raw in await client.lrange(recent_key(self.run_id), 0, -1):
            chunk = self._sample(json.loads(raw)["sample"])
            if chunk:
                yield chunk

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
            if event["type"] == "sample":
                chunk = self._sample(event["sample"])
                if chunk:
                    yield chunk
            elif event["type"] == "lines":
                yield _sse("lines", {"lines": event["lines"]})
            elif event["type"] == "status":
                yield _sse("status", {k: v for k, v in event.items() if k != "type"})
                if event["status"] in FINISHED_STATUSES:
                    yield _sse("end", {})
                    return

    def _sample(self, payload: dict[str, Any]) -> str:
        seq = int(payload["seq"])
        if seq <= self.last_seq:
            return ""  # already sent: replayed from the database and seen again live
        self.last_seq = seq
        return _sse("sample", payload, event_id=seq)

    async def _ended_silently(self) -> bool:
        # A worker that died publishes no final status; the sweeper records it.
        status = await Run.objects.filter(pk=self.run_id).values_list("status", flat=True).afirst()
        return status is None or status in FINISHED_STATUSES
