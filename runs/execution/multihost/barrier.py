"""Where a cell's runner and its load hosts' drivers meet, in Redis: the start barrier,
the stop signal, the hosts' interval samples on their way to be summed, and each driver's
sign of life.

The runner dispatches one driver per load host (a Celery group), each on whichever
worker takes it. A driver connects to its host and stages sysbench (its private directory
and config file in place), then says it is ready and waits; when every host is ready the
runner says go to all of them at once, so that the hosts start within milliseconds of
each other rather than a connection's time apart. Keys live under the run's live channel
(runs/execution/stream/live.py), so installations sharing a Redis server never meet.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from functools import cache
from typing import Any

import redis
from django.conf import settings

from runs.execution.stream import live

# A driver that has not said it is alive for this long is gone with its worker.
ALIVE_TTL_S = 15
KEYS_TTL_S = 24 * 3600
GO, STOP = "go", "stop"


@cache
def _client() -> redis.Redis:
    # Blocking reads wait longer than the live path's short socket timeout allows.
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=60, socket_connect_timeout=5)


@dataclass(frozen=True)
class Ready:
    """A driver's answer at the barrier: staged, or why not."""

    index: int
    ok: bool
    message: str = ""


class CellBarrier:
    """The keys of one cell driven from `hosts` load hosts."""

    def __init__(self, run_id: int, hosts: int) -> None:
        self.hosts = hosts
        self.prefix = f"{live.channel(run_id)}:cell"

    def _key(self, *parts: object) -> str:
        return ":".join([self.prefix, *map(str, parts)])

    # --- the driver's side --------------------------------------------------------------------

    def ready(self, index: int, *, ok: bool, message: str = "") -> None:
        payload = json.dumps({"index": index, "ok": ok, "message": message})
        pipe = _client().pipeline(transaction=False)
        pipe.rpush(self._key("ready"), payload)
        pipe.expire(self._key("ready"), KEYS_TTL_S)
        pipe.execute()

    def wait_go(self, index: int, timeout_s: float) -> bool:
        """True when the runner said go; False when it said stop or never answered."""
        answer = _client().blpop([self._key("go", index)], timeout=max(0.01, timeout_s))
        return answer is not None and answer[1] == GO.encode()

    def alive(self, index: int) -> None:
        _client().set(self._key("alive", index), "1", ex=ALIVE_TTL_S)

    def stop_requested(self) -> bool:
        return bool(_client().exists(self._key(STOP)))

    def send(self, index: int, payloads: list[dict[str, Any]]) -> None:
        """Hand interval samples (or the end mark) on to the runner, in one round trip."""
        if not payloads:
            return
        key = self._key("samples", index)
        pipe = _client().pipeline(transaction=False)
        pipe.rpush(key, *(json.dumps(p) for p in payloads))
        pipe.expire(key, KEYS_TTL_S)
        pipe.execute()

    # --- the runner's side --------------------------------------------------------------------

    def wait_ready(self, timeout_s: float) -> list[Ready]:
        """Every driver's answer, or those that came within `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        answers: list[Ready] = []
        while len(answers) < self.hosts:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            got = _client().blpop([self._key("ready")], timeout=max(0.01, left))
            if got is not None:
                answers.append(Ready(**json.loads(got[1])))
        return answers

    def go(self) -> None:
        """Start every host: one round trip for all of them."""
        self._tell_all(GO)

    def stop(self) -> None:
        """Stop every host, those still waiting at the barrier too."""
        _client().set(self._key(STOP), "1", ex=KEYS_TTL_S)
        self._tell_all(STOP)

    def _tell_all(self, word: str) -> None:
        pipe = _client().pipeline(transaction=False)
        for index in range(self.hosts):
            pipe.rpush(self._key("go", index), word)
            pipe.expire(self._key("go", index), KEYS_TTL_S)
        pipe.execute()

    def receive(self, timeout_s: float) -> list[tuple[int, dict[str, Any]]]:
        """What the drivers sent, (host index, payload), waiting up to `timeout_s` for
        the first of it."""
        keys = [self._key("samples", i) for i in range(self.hosts)]
        first = _client().blpop(keys, timeout=max(0.01, timeout_s))
        if first is None:
            return []
        name = first[0].decode() if isinstance(first[0], bytes) else first[0]
        received = [(keys.index(name), json.loads(first[1]))]
        # What came meanwhile, taken and removed at once: nothing pushed between is lost.
        pipe = _client().pipeline(transaction=True)
        for key in keys:
            pipe.lrange(key, 0, -1)
            pipe.delete(key)
        drained = pipe.execute()
        for index in range(self.hosts):
            received += [(index, json.loads(raw)) for raw in drained[2 * index]]
        return received

    def silent(self) -> list[int]:
        """The drivers whose sign of life has run out."""
        values = _client().mget([self._key("alive", i) for i in range(self.hosts)])
        return [i for i, value in enumerate(values) if value is None]

    def forget(self) -> None:
        keys = [self._key("ready"), self._key(STOP)]
        for index in range(self.hosts):
            keys += [self._key(kind, index) for kind in ("go", "alive", "samples")]
        _client().delete(*keys)
