"""Celery beat's scheduler: django_celery_beat's database scheduler, made to ride out an
outage of the results database.

The library's scheduler catches database errors while it checks for changes and while it
writes run times, but not while it reads the whole schedule again, which it forces every
five minutes: an outage that overlaps that read ended beat, and with it the sweeper and
every saved schedule. Here every database step of a tick is retried on the next tick,
beat keeps firing the schedule it read last, says once that the database is away and once
that it is back, and writes the run times it could not write when the database answers.

The forced re-read comes every BENCHDASH_BEAT_FULL_SYNC_S seconds (300 by default). At
start beat must read its schedule once: with the database away it exits, and scripts/keep
starts it again."""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import time
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import DatabaseError, InterfaceError, close_old_connections, transaction
from django_celery_beat.schedulers import SCHEDULE_SYNC_MAX_INTERVAL, DatabaseScheduler

from runs.execution import liveness
from runs.services import worker_watch

logger = logging.getLogger(__name__)

DB_ERRORS = (DatabaseError, InterfaceError)
# Seconds to the next tick after a database error escaped one: soon, so that beat fires
# again as soon as the database answers, but not a busy loop.
RETRY_S = 5.0


class BeatScheduler(DatabaseScheduler):
    """The database scheduler that survives its database."""

    _last_timestamp: datetime.datetime | None
    _heap: list[Any] | None
    # Celery's TERM handler (celery/apps/beat.py, _sync) writes the schedule from inside the
    # signal handler: if the signal came during a query, a query from the handler waits
    # forever for the connection the interrupted one holds, and beat hangs until KILL.
    # These say when a query may be under way.
    _setting_up = False
    _querying = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if BeatScheduler._setting_up:
            # The handler asked for the scheduler while the first is still being built
            # (so a second would be built, querying): nothing is there to write yet.
            raise SystemExit(0)
        # The library reads only clocked schedules due within its own five minutes, so a
        # longer interval would miss some: it is at most that.
        self.full_sync_s = min(settings.BENCHDASH_BEAT_FULL_SYNC_S, SCHEDULE_SYNC_MAX_INTERVAL)
        self._last_read = time.monotonic()
        self._away_since: float | None = None
        BeatScheduler._setting_up = True
        try:
            super().__init__(*args, **kwargs)  # reads the schedule (the first read)
        finally:
            BeatScheduler._setting_up = False

    @property
    def schedule(self) -> dict[str, Any]:
        if self._initial_read:
            # The first read, as the library does it: no kept schedule to fall back on.
            self._last_read = time.monotonic()
            return super().schedule
        try:
            self._querying = True
            if self._changed() or time.monotonic() - self._last_read >= self.full_sync_s:
                self._read_again()
        except DB_ERRORS as error:
            self._lost(error)
        else:
            self._back()
        finally:
            self._querying = False
        return self._schedule

    def _changed(self) -> bool:
        """True if a schedule was edited since the last look (the library's
        schedule_changed, with the database's errors left to the caller)."""
        close_old_connections()
        # Under REPEATABLE READ (MariaDB's default) a transaction sees no later change.
        with contextlib.suppress(transaction.TransactionManagementError):
            transaction.commit()
        last, latest = self._last_timestamp, self.Changes.last_change()
        self._last_timestamp = latest
        return bool(latest and last and latest > last)

    def _read_again(self) -> None:
        # Run times first: the read replaces the entries with the rows as stored.
        self._write_run_times()
        self._schedule = self.all_as_schedule()
        # A new schedule: Scheduler.tick rebuilds its heap from it.
        self._heap = []
        self._heap_invalidated = True
        self._last_read = time.monotonic()

    def sync(self) -> None:
        """Writes the run times of the entries fired since the last sync. While the
        database is away they stay to write, and are written once it answers."""
        if self._querying:
            return  # called by the TERM handler during a query: see _querying
        self._querying = True
        try:
            self._write_run_times()
        finally:
            self._querying = False

    def _write_run_times(self) -> None:
        if self._away_since is not None or self._schedule is None:
            return
        close_old_connections()
        while self._dirty:
            name = self._dirty.pop()
            entry = self._schedule.get(name)
            try:
                if entry is not None:
                    entry.save()
            except ObjectDoesNotExist:
                pass  # deleted since it fired
            except DB_ERRORS as error:
                self._dirty.add(name)
                self._lost(error)
                return

    _last_beat = 0.0
    _last_watch = 0.0

    def tick(self, *args: Any, **kwargs: Any) -> float:
        self._heartbeat()
        self._watch()
        try:
            # Awake at least once a heartbeat, so that a live beat never looks gone, and
            # once a watch.
            delay = float(super().tick(*args, **kwargs))
            return min(delay, settings.BENCHDASH_PROCESS_BEAT_S, settings.BENCHDASH_WATCH_S)
        except DB_ERRORS as error:
            # From a database step the library does not guard (a one-off schedule switched
            # off when it is due, for one): tried again at the next tick.
            self._lost(error)
            return min(self.max_interval, RETRY_S)

    def _heartbeat(self) -> None:
        """Beat's heartbeat in Redis (runs/execution/liveness.py), for the health page: at
        most one write every BENCHDASH_PROCESS_BEAT_S, whatever the database does."""
        now = time.monotonic()
        if now - self._last_beat < settings.BENCHDASH_PROCESS_BEAT_S:
            return
        self._last_beat = now
        liveness.process_beat(
            name=liveness.BEAT,
            report={"pid": os.getpid(), "database": "away" if self._away_since else "ok"},
        )

    def _watch(self) -> None:
        """Every BENCHDASH_WATCH_S, whether a worker fell silent while running a batch or a
        target's put-back is due (runs/services/worker_watch.py: Redis only); the task that
        recovers them is sent only then."""
        now = time.monotonic()
        if now - self._last_watch < settings.BENCHDASH_WATCH_S:
            return
        self._last_watch = now
        if worker_watch.worth_a_look():
            try:
                self.app.send_task("runs.tasks.watch_workers")
            except Exception as error:  # a broker gone since the look: the next watch tries
                logger.warning("beat: the watch's task not sent: %s", _first_line(error))

    def _lost(self, error: Exception) -> None:
        with contextlib.suppress(*DB_ERRORS):
            close_old_connections()
        if self._away_since is not None:
            return
        self._away_since = time.monotonic()
        logger.warning(
            "beat: the results database is unreachable (%s): beat goes on with the last "
            "schedule it read (%d entries) and tries the database again at every tick",
            _first_line(error),
            len(self._schedule or {}),
        )

    def _back(self) -> None:
        if self._away_since is None:
            return
        away = time.monotonic() - self._away_since
        self._away_since = None
        logger.warning("beat: the results database answers again after %.0f s", away)
        self._write_run_times()


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
