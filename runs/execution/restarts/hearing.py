"""How a restart's waits hear the batch. Going forward, a cancel at once (the batch's
cancel listener, as a running cell hears it), not at the next heartbeat; putting the
original back, deaf to it (that is its answer to a cancel), beating all along."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from runs.execution.stream.heartbeat import BatchStopped, Watch

Tick = Callable[[], None]  # beats; raises BatchStopped when the batch must stop


def stoppable(tick: Tick, batch_id: int, heard: threading.Event) -> Tick:
    """`tick`, raising BatchStopped the moment the listener `heard` a cancel."""
    watch = Watch(batch_id, cancel_heard=heard)

    def beat() -> None:
        if (stop := watch.check()) is not None:
            raise stop
        tick()

    return beat


def beat_only(tick: Tick) -> Tick:
    """Putting the original back goes on in a batch that was cancelled: it beats."""

    def beat() -> None:
        with contextlib.suppress(BatchStopped):
            tick()

    return beat
