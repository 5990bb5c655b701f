"""The Server-Sent Events of a run, for the pages: what is stored, then what the worker
publishes live (runs/execution/live.py), each sample exactly once and in order."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis
from django.conf import settings

from runs.execution.live import channel, recent_key, sample_payload, status_payload
from runs.models import FINISHED_STATUSES, Run, Sample

KEEPALIVE_S = 15.0


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
