"""When a cell fails in a way the next cells would repeat: a target that went away (a
restart) is waited for, bounded; an error no retry can cure (access denied, a missing
table) stops the batch after its first occurrence, instead of N identical failures."""

from __future__ import annotations

import time
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from runs import targets
from runs.execution.stream.heartbeat import Pulse, Watch
from runs.models import Batch, Target

POLL_S = 2.0  # how often an unreachable target is tried again

# sysbench's error kinds (runs/sysbench/errors.py) that every following cell would repeat.
REPEATING_KINDS = frozenset({"access_denied", "missing_table", "unknown_host", "lua", "option"})
# What the client libraries say when the server is not there (yet): MySQL's codes, libpq's
# words. Anything else a server answers is an answer: it is there.
_UNREACHABLE_CODES = ("error 2002:", "error 2003:", "error 2006:", "error 2013:")
_UNREACHABLE_WORDS = (
    "Connection refused",
    "server closed the connection",
    "the database system is starting up",
    "the database system is shutting down",
    "terminating connection",
    "timeout expired",
    "Lost connection",
)
_REPEATING_WORDS = (
    "error 1044:",
    "error 1045:",
    "error 1049:",
    "error 1146:",
    "password authentication failed",
    "does not exist",
    "permission denied",
)


class TargetGone(Exception):
    """The target did not come back in time, or an error will repeat in every cell."""


def failure_kind(kind: str, message: str) -> str:
    """ "unreachable", "repeating", or "" for a failure that concerns one cell only."""
    if kind in REPEATING_KINDS or any(w in message for w in _REPEATING_WORDS):
        return "repeating"
    if kind == "connect" or unreachable(message):
        return "unreachable"
    return ""


def unreachable(message: str) -> bool:
    return any(w in message for w in (*_UNREACHABLE_CODES, *_UNREACHABLE_WORDS))


def target_wait(*, batch: Batch, pulse: Pulse, error: str, target: Target | None = None) -> None:
    """Wait, beating, until the target answers again; TargetGone after
    BENCHDASH_TARGET_WAIT_S. Shown on the batch as `waiting: target unreachable`; its
    status stays running, so that neither the sweeper nor the locks misread it. `target`:
    the one away (the batch's own by default)."""
    target = target or batch.target
    assert target is not None
    limit = settings.BENCHDASH_TARGET_WAIT_S
    since = timezone.now()
    deadline = time.monotonic() + limit
    watch = Watch(batch.pk)
    cause = error  # what the failed cell said: the batch ends with it if the wait does
    show_waiting(batch, pulse, f"waiting: target unreachable since {since:%H:%M:%S} UTC ({error})")
    try:
        while True:
            try:
                with targets.connect_to(target):
                    return _came_back(batch, target, since)
            except targets.TargetError as e:
                if not unreachable(e.message):
                    # It answers: the next cell's own error will say what is wrong.
                    return _came_back(batch, target, since)
                error = e.message
            if time.monotonic() >= deadline:
                last = f"; then: {error}" if error != cause else ""
                raise TargetGone(
                    f"the target {target.name} was unreachable for {limit:g} s "
                    f"(since {since:%H:%M:%S} UTC): {cause}{last}"
                )
            time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))
            stop = pulse.tick(watch)
            if stop is not None:
                raise stop
    finally:
        show_waiting(batch, pulse, "")


def _came_back(batch: Batch, target: Target, since: datetime) -> None:
    """Said on the batch (stored with its end): why a cell failed, and for how long."""
    away_s = (timezone.now() - since).total_seconds()
    batch.warnings = [
        *batch.warnings,
        f"the target {target} was unreachable from {since:%H:%M:%S} UTC and came back "
        f"{away_s:.0f} s later; the cell running then failed, the batch went on",
    ]


def show_waiting(batch: Batch, pulse: Pulse, text: str) -> None:
    """What the batch waits for, on its page and in the API; "" once it does not."""
    batch.waiting_for = text
    pulse.store.attempt(lambda: Batch.objects.filter(pk=batch.pk).update(waiting_for=text[:300]))
