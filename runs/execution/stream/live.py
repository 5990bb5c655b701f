"""Live events of a run over Redis: the worker publishes here, and the pages' Server-Sent
Events (runs/web/events.py) subscribe.

Each batch of lines is published the moment it is read, with the samples parsed from it,
in one write, before any of it is written to the database (that follows with the
run's heartbeat, every few seconds). To let a client join at any moment without a gap or
a duplicate, each sample is also pushed to a short per-run list before it is published.
That list is also what the sweeper stores when a worker died before it wrote its last
samples (runs/services/recovery.py).
A subscriber first subscribes, then replays the stored samples and the short list, then
follows the channel, dropping every sequence number it has already sent: anything pushed
before the replay is in the list, anything after it arrives on the channel.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

import orjson
import redis
from django.conf import settings

from runs.models import SAMPLE_FIGURES, Run, Sample, sample_figures

logger = logging.getLogger(__name__)

# Far more than wait for the database normally (one heartbeat of samples), and enough for
# minutes of a results database away (runs/execution/outages/outage_buffer.py).
RECENT_SAMPLES = 1000
RECENT_TTL_S = 24 * 3600


def installation() -> str:
    """What sets this installation's live events apart from another's on the same Redis
    server: pub/sub ignores the database number, and two installations reuse run ids.
    Read at each call: the test runner renames the database after settings load."""
    return settings.BENCHDASH_INSTALLATION or str(settings.DATABASES["default"]["NAME"])


def channel(run_id: int) -> str:
    return f"benchdash:{installation()}:run:{run_id}"


def recent_key(run_id: int) -> str:
    return f"{channel(run_id)}:recent"


def sample_payload(sample: Any) -> dict[str, Any]:
    """A sample as viewers get it: a stored Sample, or the sink's LiveSample."""
    payload = dict(zip(SAMPLE_FIGURES, sample_figures(sample), strict=True))
    payload.update(sample.extra or {})
    # When the worker read the line (epoch seconds): lets a client measure its lag.
    payload["received_at"] = sample.received_at.timestamp()
    return payload


def redis_client() -> redis.Redis:
    """The installation's Redis, with the short timeouts of live events."""
    return _client()


@cache
def _client() -> redis.Redis:
    # Short timeouts: a slow or absent Redis must never stall a benchmark.
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2, health_check_interval=30
    )


def _publish(run_id: int, messages: list[bytes], recent: list[bytes]) -> str:
    """Messages (JSON) to the run's channel, in one write; `recent` (samples among them)
    first to the run's recent list. Why they did not go out, or "" when they did."""
    name = channel(run_id)
    commands: list[tuple[str | int | bytes, ...]] = []
    if recent:
        key = recent_key(run_id)
        commands += [
            ("RPUSH", key, *recent),
            ("LTRIM", key, -RECENT_SAMPLES, -1),
            ("EXPIRE", key, RECENT_TTL_S),
        ]
    commands += [("PUBLISH", name, message) for message in messages]
    try:
        _send(commands)
    except redis.RedisError as e:
        # Live display is a convenience; the database keeps every sample regardless.
        logger.warning("run %s: live events not published: %s", run_id, e)
        return str(e) or type(e).__name__
    return ""


class _Sender(threading.local):
    """A thread's own connection for live events, and how many of its answers are unread.
    A forked process (a prefork worker) opens its own."""

    connection: redis.connection.ConnectionInterface | None = None
    pid = 0
    unread = 0


_sender = _Sender()


def _send(commands: list[tuple[str | int | bytes, ...]]) -> None:
    """Commands to Redis in one write, without waiting for the answers: they are read at
    the thread's next send, by when they have long arrived. A worker that wakes once a
    second for a line would otherwise sleep on Redis and wake up once more, which costs
    more than everything else it does for that line (docs/PERFORMANCE.md). Redis runs one
    connection's commands in order, so the list is pushed before the samples are
    published all the same. No MULTI: a partial failure costs a viewer a refresh, never a
    sample (the database has it)."""
    connection = _sender.connection
    if connection is None or _sender.pid != os.getpid():
        connection = _sender.connection = _client().connection_pool.make_connection()
        _sender.pid, _sender.unread = os.getpid(), 0
    try:
        for _ in range(_sender.unread):
            connection.read_response()
    except redis.RedisError as e:
        logger.warning("live events: an earlier publish failed: %s", e)
        connection.disconnect()  # with whatever answers were left: a fresh start
    _sender.unread = 0
    try:
        connection.send_packed_command(connection.pack_commands(commands))
    except BaseException:
        connection.disconnect()
        raise
    _sender.unread = len(commands)


def publish_word(name: str, word: bytes) -> None:
    """A word on a channel (a cancel listener's end, cancel.py), in one write without
    waiting for its answer, like the live events; lost without Redis, which its listener,
    on the same Redis, does not outlive."""
    try:
        _send([("PUBLISH", name, word)])
    except redis.RedisError as e:
        logger.warning("%s: not published: %s", name, e)


def publish(
    run_id: int, lines: list[str], samples: Sequence[Any], hosts: Sequence[Any] = ()
) -> str:
    """Lines just read and the samples parsed from them: one write to Redis, with one
    message for the lines and one for the samples (each sample encoded once, by orjson,
    for the recent list and for the message); the machines' new host metrics rows
    (runs/execution/host_metrics.py) in a message of their own, in the same write. Why
    they did not go out, or ""."""
    encoded = [orjson.dumps(sample_payload(s)) for s in samples]
    # With its line: the sweeper adds it to the raw log should the worker die.
    recent = [
        b'{"type":"sample","sample":'
        + e
        + b',"line":'
        + orjson.dumps(getattr(s, "line", ""))
        + b"}"
        for e, s in zip(encoded, samples, strict=True)
    ]
    messages = [orjson.dumps({"type": "lines", "lines": lines})] if lines else []
    if encoded:
        messages.append(b'{"type":"samples","samples":[' + b",".join(encoded) + b"]}")
    if hosts:
        messages.append(orjson.dumps({"type": "host_metrics", "rows": [h.record() for h in hosts]}))
    return _publish(run_id, messages, recent) if messages else ""


def publish_sample(run_id: int, sample: Sample) -> None:
    publish(run_id, [], [sample])


def recent_samples(run_id: int) -> list[dict[str, Any]]:
    """The samples published last (see RECENT_SAMPLES), oldest first; [] without Redis."""
    return [sample for sample, _ in recent_entries(run_id)]


def recent_entries(run_id: int) -> list[tuple[dict[str, Any], str]]:
    """The samples published last, each with sysbench's line it came from."""
    try:
        raw = _client().lrange(recent_key(run_id), 0, -1)
    except redis.RedisError as e:
        logger.warning("run %s: recent samples not read: %s", run_id, e)
        return []
    entries = [orjson.loads(item) for item in raw]
    return [(entry["sample"], entry.get("line", "")) for entry in entries]


def publish_start(run: Run) -> None:
    """A run begins: forget any list left under its id (a recreated database reuses ids)."""
    try:
        _client().delete(recent_key(run.pk))
    except redis.RedisError as e:
        logger.warning("run %s: live events not reset: %s", run.pk, e)
    publish_status(run)


def publish_status(run: Run) -> None:
    _publish(run.pk, [orjson.dumps({"type": "status", **status_payload(run)})], [])


def status_payload(run: Run) -> dict[str, Any]:
    return {
        "status": run.status,
        "error": run.error,
        "hint": run.error_hint,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


def publish_host(run_id: int, index: int, host: str, samples: list[dict[str, Any]]) -> None:
    """One load host's own samples of a cell driven from several hosts, for the charts
    that show each host beside the sum (the sum goes out as the run's samples)."""
    messages = [
        orjson.dumps({"type": "host_sample", "index": index, "host": host, "sample": sample})
        for sample in samples
    ]
    if messages:
        _publish(run_id, messages, [])
