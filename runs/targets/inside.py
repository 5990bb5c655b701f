"""What the server under test accounts for inside itself, read around a run: its wait
summaries and statement digests, and a sampled profile of the waits in progress.

- MySQL/MariaDB: performance_schema's events_waits_summary_global_by_event_name and
  events_statements_summary_by_digest, read as a snapshot at the run's first and last
  counter readings (runs/targets/counters.py): the analysis takes their deltas
  (runs/analysis/why/inside.py). Only what performance_schema has instrumented is there:
  MariaDB's defaults time file I/O (the binary log's syncs among them, not its redo log)
  and table I/O, not mutexes.
- PostgreSQL: pg_stat_statements at both ends when the extension is installed in the
  target database (the fix says how otherwise), and `WaitSampler`: a thread with a
  connection of its own that counts, every `interval_s` (0.2 s by default), the target
  database's backends that are active and what each waits on (ASH-style: a wait counts
  only while it is in progress; an active backend waiting on nothing is on CPU).

Statements are constants; the target database is the connection's. Each reader returns
plain values; a server that cannot give them says why in `InsideReadable`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from runs.targets.base import FsyncTiming, TargetError

logger = logging.getLogger(__name__)

Query = Callable[..., list[tuple[Any, ...]]]
# readable, and when not, why and the statements that make it readable
InsideReadable = FsyncTiming

_MYSQL_WAITS = (
    "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT "
    "FROM performance_schema.events_waits_summary_global_by_event_name "
    "WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'"
)
_MYSQL_DIGESTS = (
    "SELECT DIGEST, LEFT(DIGEST_TEXT, 300), COUNT_STAR, SUM_TIMER_WAIT, SUM_ROWS_EXAMINED, "
    "SUM_ROWS_SENT FROM performance_schema.events_statements_summary_by_digest "
    "WHERE SCHEMA_NAME = DATABASE() AND COUNT_STAR > 0"
)
PG_STATEMENTS_FIX = (
    "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'; restart the server; "
    "then in the target database: CREATE EXTENSION pg_stat_statements;"
)
# total_exec_time since PostgreSQL 13, total_time before; `rows`: returned or affected.
_PG_STATEMENTS = (
    "SELECT queryid::text, LEFT(query, 300), calls, {total}, rows, "
    "shared_blks_hit + shared_blks_read FROM pg_stat_statements "
    "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
)
PG_WAITS_NOW = (
    "SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*) "
    "FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' "
    "AND pid <> pg_backend_pid() AND backend_type = 'client backend' GROUP BY 1"
)


def mysql_readable(query: Query) -> InsideReadable:
    rows = query("SELECT @@performance_schema")
    if not (rows and str(rows[0][0]) in ("1", "ON")):
        return InsideReadable(
            False,
            "performance_schema is off: no wait events or statement digests",
            "performance_schema=ON in the server's configuration, and a restart",
        )
    try:
        query(_MYSQL_WAITS + " LIMIT 0")
        query(_MYSQL_DIGESTS + " LIMIT 0")
    except TargetError as e:
        return InsideReadable(False, f"performance_schema cannot be read: {e.message}")
    return InsideReadable(True)


def mysql_snapshot(query: Query) -> dict[str, Any]:
    """The wait summaries and the target database's statement digests, cumulative:
    {"waits": {event: [count, picoseconds]}, "digests": {digest: {...}}}."""
    waits = {str(e): [float(c), float(ps or 0)] for e, c, ps in query(_MYSQL_WAITS)}
    digests = {
        str(digest): {
            "text": str(text or ""),
            "calls": float(calls),
            "ps": float(ps or 0),
            "rows_examined": float(examined or 0),
            "rows_sent": float(sent or 0),
        }
        for digest, text, calls, ps, examined, sent in query(_MYSQL_DIGESTS)
        if digest is not None
    }
    return {"waits": waits, "digests": digests, "at": time.monotonic()}


def pg_readable(query: Query) -> InsideReadable:
    rows = query("SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'")
    if rows:
        try:
            query("SELECT 1 FROM pg_stat_statements LIMIT 0")
        except TargetError as e:  # installed, not preloaded: "must be loaded via ..."
            return InsideReadable(False, f"pg_stat_statements cannot be read: {e.message}",
                                  PG_STATEMENTS_FIX)  # fmt: skip
        return InsideReadable(True)
    preload = query("SELECT current_setting('shared_preload_libraries')")
    loaded = str(preload[0][0] or "") if preload else ""
    if "pg_stat_statements" in loaded:
        fix = "in the target database: CREATE EXTENSION pg_stat_statements;"
    elif loaded:  # the libraries already there stay: the new one is added to them
        fix = PG_STATEMENTS_FIX.replace("'pg_stat_statements'", f"'{loaded}, pg_stat_statements'")
    else:
        fix = PG_STATEMENTS_FIX
    return InsideReadable(
        False, "pg_stat_statements is not installed in the target database: no digests", fix
    )


def pg_snapshot(query: Query, *, version_num: int) -> dict[str, Any]:
    """pg_stat_statements of the target database, cumulative, in the MySQL snapshot's shape
    (picoseconds; PostgreSQL's `rows` as rows sent, shared blocks as examined)."""
    total = "total_exec_time" if version_num >= 130000 else "total_time"
    digests = {
        str(queryid): {
            "text": str(text or ""),
            "calls": float(calls),
            "ps": float(ms or 0) * 1e9,
            "rows_sent": float(rows or 0),
            "blocks": float(blocks or 0),
        }
        for queryid, text, calls, ms, rows, blocks in query(_PG_STATEMENTS.format(total=total))
        if queryid is not None
    }
    return {"digests": digests, "at": time.monotonic()}


class WaitSampler:
    """A thread that counts the target's active backends by what they wait on, every
    `interval_s`, on a connection of its own, until stopped. `connect` opens that
    connection and yields the target (its `waits_now()`); the profile is plain counts."""

    def __init__(
        self,
        *,
        run_id: int,
        connect: Callable[[], Any],
        interval_s: float,
    ) -> None:
        self.run_id = run_id
        self.interval_s = interval_s
        self.samples = 0  # times the sampler looked
        self.waits: Counter[str] = Counter()  # backend-samples per wait ("CPU": none)
        self.error = ""
        self.elapsed_s = 0.0  # time spent in the queries, the sampler's own cost
        self._connect = connect
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"waits-run-{run_id}",
                                        daemon=True)  # fmt: skip

    def start(self) -> WaitSampler:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 10.0) -> dict[str, Any]:
        self._stop.set()
        self._thread.join(timeout=timeout_s)
        return self.profile()

    def profile(self) -> dict[str, Any]:
        return {
            "interval_s": self.interval_s,
            "samples": self.samples,
            "waits": dict(self.waits),
            "query_s": round(self.elapsed_s, 4),
            "error": self.error,
        }

    def _loop(self) -> None:
        try:
            with self._connect() as db:
                while not self._stop.is_set():
                    started = time.monotonic()
                    for wait, count in db.waits_now():
                        self.waits[str(wait)] += int(count)
                    self.samples += 1
                    took = time.monotonic() - started
                    self.elapsed_s += took
                    self._stop.wait(max(0.0, self.interval_s - took))
        except TargetError as e:
            self.error = e.message
            logger.warning("run %s: waits not sampled: %s", self.run_id, e.message)
        except Exception as e:  # a profile lost must never fail the benchmark
            self.error = f"internal error: {e}"
            logger.exception("run %s: the wait sampler failed", self.run_id)
