"""Celery's transport: Redis, with every key of the broker under this installation's name.

Two installations on one Redis server (the same database number, or another: pub/sub
ignores it) would otherwise share Celery's queues, `benchmarks` among them, and each
installation's worker would take the other's batches. kombu's `global_keyprefix` puts
each key it writes or reads under a prefix (the queues' lists, their bindings, the
unacknowledged messages, the workers' control channels), so the queues keep their short
names (`-Q benchmarks`, the task routes, scripts/start) and live at
`benchdash:<installation>:broker:<name>`. The prefix is read when a channel opens, not
when settings load: the test runner and the bench scripts rename the results database
after that, as runs/execution/stream/live.py reads the installation too.

Named by CELERY_BROKER_TRANSPORT (benchdash/settings.py).
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis


def key_prefix() -> str:
    """Where this installation's broker keys live on the shared Redis."""
    from runs.execution.stream import live  # loads models: only once Django is set up

    return f"benchdash:{live.installation()}:broker:"


class Channel(redis.Channel):
    def _get_client(self) -> Any:
        # Called by the channel's __init__ before any command is sent.
        self.global_keyprefix = key_prefix()
        return super()._get_client()  # type: ignore[misc]  # kombu's, untyped


class Transport(redis.Transport):
    Channel = Channel
