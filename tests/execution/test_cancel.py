"""The cancel listener (runs/execution/stream/cancel.py) on this slot's Redis: a cancel heard at
once, nothing else taken for one, and a listener gone the moment its run is over, not at
its next tick."""

from __future__ import annotations

import threading

import redis

from runs.execution.stream.cancel import (
    LISTEN_TICK_S,
    CancelListener,
    cancel_channel,
    publish_cancel,
)
from tests.helpers import wait_until

BATCH = 828282


def subscribers(settings, batch_id: int) -> int:
    client = redis.Redis.from_url(settings.REDIS_URL)
    (_, count), *_ = client.pubsub_numsub(cancel_channel(batch_id))
    return int(count)


def test_only_a_cancel_cancels_and_it_is_heard_at_once(settings):
    stopped = threading.Event()
    with CancelListener(BATCH, on_cancel=stopped.set) as listener:
        wait_until(lambda: subscribers(settings, BATCH) == 1, timeout=10, what="a subscription")
        client = redis.Redis.from_url(settings.REDIS_URL)
        client.publish(cancel_channel(BATCH), b"over 1234")  # another listener's end
        client.publish(cancel_channel(BATCH + 1), b"cancel")  # another batch's cancel
        assert not stopped.wait(1.0) and not listener.heard.is_set()

        publish_cancel(BATCH)
        assert stopped.wait(5.0) and listener.heard.is_set()


def test_a_listener_ends_with_its_run_not_at_its_next_tick(settings):
    stopped = threading.Event()
    with CancelListener(BATCH + 2, on_cancel=stopped.set):
        wait_until(lambda: subscribers(settings, BATCH + 2) == 1, timeout=10, what="a subscription")
    # The word the run's end publishes wakes it: gone long before a tick would.
    wait_until(lambda: subscribers(settings, BATCH + 2) == 0, timeout=LISTEN_TICK_S / 6,
               what="the listener gone")  # fmt: skip
    publish_cancel(BATCH + 2)  # a cancel after the run is over is nobody's
    assert not stopped.wait(0.5)
