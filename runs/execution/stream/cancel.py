"""A cancel heard at once. The cancel service records the request on the batch and
publishes it on the batch's channel in Redis; the worker running the batch listens there
while sysbench runs and stops it the moment the request comes, instead of at its next
heartbeat. The heartbeat still reads the request from the database: it is the fallback
when Redis is away or the request was published before the worker listened.

The listener blocks on its subscription with no tick of its own: when its run is over
the worker publishes a word of its own on the same channel, which wakes it to end (a
listener that woke each few seconds to look cost the worker about 0.1 ms a second of
run). Only the word "cancel" cancels.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from types import TracebackType

import redis
from django.conf import settings

from runs.execution.stream import live
from runs.execution.stream.live import installation

logger = logging.getLogger(__name__)

CANCEL = b"cancel"
# How long a listener may outlive its run should the word that ends it be lost (published
# before its subscription took): it never acts once the run is over, and nobody waits.
LISTEN_TICK_S = 30.0


def cancel_channel(batch_id: int) -> str:
    return f"benchdash:{installation()}:batch:{batch_id}:cancel"


def publish_cancel(batch_id: int) -> None:
    """Tell the worker running the batch now; without Redis, its heartbeat tells it."""
    try:
        redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2
        ).publish(cancel_channel(batch_id), CANCEL)
    except redis.RedisError as e:
        logger.warning("batch %s: cancel not published (the heartbeat carries it): %s", batch_id, e)


class CancelListener:
    """While open, listens for the batch's cancel; when it comes, `heard` is set and
    `on_cancel` is called (it stops sysbench) from the listener's thread."""

    def __init__(self, batch_id: int, on_cancel: Callable[[], None]) -> None:
        self.batch_id = batch_id
        self.on_cancel = on_cancel
        self.heard = threading.Event()
        self._done = threading.Event()
        self._over = f"over {uuid.uuid4().hex}".encode()  # the word that ends this one
        self._thread = threading.Thread(
            target=self._listen, name=f"cancel-listener-{batch_id}", daemon=True
        )

    def __enter__(self) -> CancelListener:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Not joined: the cell goes on at once; the word wakes the thread, which ends.
        self._done.set()
        live.publish_word(cancel_channel(self.batch_id), self._over)

    def _listen(self) -> None:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=2
        )
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            pubsub.subscribe(cancel_channel(self.batch_id))
            while not self._done.is_set():
                message = pubsub.get_message(timeout=LISTEN_TICK_S)
                if message is None or message["data"] != CANCEL:
                    continue  # the tick, or the word that ends a listener (this one's)
                if not self._done.is_set():
                    self.heard.set()
                    self.on_cancel()
                return
        except (redis.RedisError, OSError) as e:
            logger.warning("batch %s: not listening for a cancel (the heartbeat carries it): %s",
                           self.batch_id, e)  # fmt: skip
        finally:
            pubsub.close()
            client.close()
