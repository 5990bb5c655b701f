"""When a server the installation needs was first seen away, kept in Redis.

The health answer (runs/services/health.py) says which server is down and since when;
what one web process saw is not enough (each uvicorn worker, beat, the workers each see
the outage on their own), so the first failure any of them saw is kept here, one field
of a hash per server, and removed by the first that sees it back. Redis is the part
that stays up when the results database goes: a Redis that is away itself is only
skipped (the answer then says the outage without its start).
"""

from __future__ import annotations

import contextlib
import time

import redis

from runs.execution.stream import live

DATABASE = "database"


def _key() -> str:
    return f"benchdash:{live.installation()}:down-since"


def seen_down(server: str, at: float | None = None) -> float | None:
    """`server` is away: the time (epoch seconds) of the first failure anyone saw, this
    one when it is the first; None when Redis cannot say."""
    try:
        client = live.redis_client()
        client.hsetnx(_key(), server, repr(time.time() if at is None else at))
        first = client.hget(_key(), server)
    except redis.RedisError:
        return None
    return float(first) if first is not None else None


def seen_up(server: str) -> None:
    """`server` answers again: its outage is over."""
    with contextlib.suppress(redis.RedisError):
        live.redis_client().hdel(_key(), server)
