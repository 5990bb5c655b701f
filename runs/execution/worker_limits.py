"""The open-file limit of the workers that run benchmarks, as each reported it at start.

sysbench on the local load host is a child of the benchmarks worker and inherits its
limits (raised to the hard limit for each run), not the web server's: a plan checked in
the editor must be checked against the worker's. Each worker writes its own limit in
Redis when it starts and removes it when it stops; preflight in the web process reads it.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from functools import cache
from typing import Any

import orjson
import redis
from django.conf import settings

from runs.execution.stream import live

BENCHMARKS_QUEUE = "benchmarks"


def _key() -> str:
    return f"benchdash:{live.installation()}:worker-open-files"


@cache
def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def record_open_files(*, worker: str) -> None:
    """Called by a benchmarks worker as it starts: its own limit, as sysbench will get it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    report = {
        "soft": soft,
        "hard": hard,
        "machine": socket.gethostname(),
        "pid": os.getpid(),
        "at": time.time(),
    }
    _client().hset(_key(), worker, orjson.dumps(report))


def forget_open_files(*, worker: str) -> None:
    _client().hdel(_key(), worker)


def reported_open_files() -> dict[str, dict[str, Any]]:
    """Worker name -> {soft, hard, pid, at}, for every benchmarks worker that reported.
    Empty when none did or Redis cannot be reached."""
    try:
        raw = _client().hgetall(_key())
    except redis.RedisError:
        return {}
    reports = {_text(name): orjson.loads(value) for name, value in raw.items()}
    return {name: report for name, report in reports.items() if not _gone(report)}


def lowest_open_files() -> tuple[str, dict[str, Any]] | None:
    """The reporting worker with the lowest hard limit (any of them may get the batch),
    and its limits; None when none reported."""
    reported = reported_open_files()
    if not reported:
        return None
    worker = min(reported, key=lambda name: _hard(reported[name]))
    return worker, reported[worker]


def _hard(limits: dict[str, Any]) -> float:
    hard = limits.get("hard")
    return float("inf") if hard is None or hard < 0 else float(hard)


def _text(name: bytes | str) -> str:
    return name.decode() if isinstance(name, bytes) else name


def _gone(report: dict[str, Any]) -> bool:
    """A worker of this machine killed without its shutdown: its report is stale."""
    if report.get("machine") != socket.gethostname():
        return False  # another machine's worker: nothing to tell from here
    try:
        os.kill(int(report["pid"]), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, KeyError, ValueError):
        return False
    return False
