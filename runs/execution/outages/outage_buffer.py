"""The worker's writes held through an outage of the results database, which may go
away for a while.

A restart or a failover of benchdash's own PostgreSQL must not cost a benchmark: while
it is away, the running sysbench goes on, its samples and raw lines wait in memory (and
reach live viewers through Redis), and every write is tried again with a bounded backoff
on a new connection. The outage is remembered, so that the run can say it happened. A
database away longer than BENCHDASH_RESULTS_DB_OUTAGE_S stops the run.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.utils import timezone

from runs.execution.outages import down_since

logger = logging.getLogger(__name__)

T = TypeVar("T")
BACKOFF_S = (0.5, 1.0, 2.0)  # then every 2 s: back within 2 s of the database's return
LOST = (OperationalError, InterfaceError)


class ResultsUnreachable(Exception):
    """The results database stayed away longer than the limit."""


@dataclass
class Outage:
    """An outage as the worker saw it. `started` is its first failed write: a detection
    time, up to a heartbeat after the database went. The database was still there at
    `last_ok`, its last write that went through, so the outage is told from there: at
    most that long, never shorter than it was."""

    started: datetime
    ended: datetime | None = None  # the first write that went through after it
    error: str = ""
    last_ok: datetime | None = None

    @property
    def began(self) -> datetime:
        """The earliest the database can have gone."""
        return self.last_ok or self.started

    def describe(self) -> str:
        ended = self.ended or timezone.now()
        seconds = (ended - self.began).total_seconds()
        return (
            f"the results database was unreachable from {self.began:%H:%M:%S} to "
            f"{ended:%H:%M:%S} UTC ({seconds:.0f} s at most: from the worker's last write "
            f"that went through to its first after; its writes failed from "
            f"{self.started:%H:%M:%S}: {self.error}); sysbench went on and what it printed "
            "meanwhile was kept in memory and stored when the database was back"
        )


class OutageBuffer:
    """Runs the worker's writes, noting when the database is lost and when it is back."""

    def __init__(self, limit_s: float | None = None) -> None:
        self.limit_s = settings.BENCHDASH_RESULTS_DB_OUTAGE_S if limit_s is None else limit_s
        self.outages: list[Outage] = []
        self._down_since: float | None = None
        self._failures = 0
        self._next_try = 0.0
        self._last_ok: datetime | None = None

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def overdue(self) -> bool:
        """Away for longer than the limit: time to stop the run."""
        return self._down_since is not None and time.monotonic() - self._down_since > self.limit_s

    def attempt(self, write: Callable[[], object]) -> bool:
        """One try at `write`, unless backing off after a failure; whether it was done."""
        if self._down_since is not None and time.monotonic() < self._next_try:
            return False
        try:
            write()
        except LOST as e:
            self._lost(e)
            return False
        self._back()
        return True

    def ensure(self, write: Callable[[], T], limit_s: float | None = None) -> T:
        """`write`, tried again until it succeeds or the database has been away for
        `limit_s` (the store's limit by default): then ResultsUnreachable."""
        limit = self.limit_s if limit_s is None else limit_s
        while True:
            try:
                result = write()
            except LOST as e:
                self._lost(e)
                assert self._down_since is not None
                if time.monotonic() - self._down_since > limit:
                    raise ResultsUnreachable(self.outages[-1].describe()) from e
                time.sleep(max(0.0, self._next_try - time.monotonic()))
                continue
            self._back()
            return result

    def warnings(self) -> list[str]:
        return [o.describe() for o in self.outages]

    def _lost(self, error: Exception) -> None:
        # The connection is dead: a new one is opened at the next query.
        with contextlib.suppress(Exception):
            connection.close()
        now = time.monotonic()
        if self._down_since is None:
            self._down_since = now
            self._failures = 0
            self.outages.append(
                Outage(started=timezone.now(), error=_first_line(error), last_ok=self._last_ok)
            )
            logger.warning("the results database is unreachable: %s", _first_line(error))
            down_since.seen_down(down_since.DATABASE)  # the health answer's "since"
        self._next_try = now + BACKOFF_S[min(self._failures, len(BACKOFF_S) - 1)]
        self._failures += 1

    def _back(self) -> None:
        self._last_ok = timezone.now()
        if self._down_since is None:
            return
        self._down_since = None
        down_since.seen_up(down_since.DATABASE)
        self.outages[-1].ended = self._last_ok
        logger.warning("the results database is back: %s", self.outages[-1].describe())


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
