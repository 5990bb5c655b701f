"""The health of an installation: its processes, the servers it needs, and its queue.

What the health page, `GET /api/v1/health` and `benchdash health` show. The processes'
heartbeats come from Redis (runs/execution/liveness.py): each worker, beat and the
sweeper. A process is gone when its heartbeat is older than BENCHDASH_STALE_AFTER_SECONDS
(the sweeper, which beats once a sweep, gets two sweeps more). The parts read from the
results database (each worker's batch, the queue) are left out when it cannot be reached:
the report still says who is alive, and since when the database is away (the first
failure anyone saw, kept in Redis: runs/execution/outages/down_since.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from django.conf import settings
from django.db import DatabaseError, InterfaceError, close_old_connections, connection

from runs.execution import liveness
from runs.execution.outages import down_since
from runs.models import Batch, Status
from runs.services import selectors

BENCHMARKS_QUEUE = "benchmarks"
HOUSEKEEPING_QUEUE = "celery"
# A worker killed without its shutdown leaves its heartbeat: said gone for an hour, then
# forgotten (a worker that stops normally removes its own).
FORGET_AFTER_S = 3600.0
QUEUE_SHOWN = 50
WEB = "web"  # the web's heartbeat field, written by benchdash/serve.py


@dataclass
class ProcessHealth:
    name: str
    alive: bool
    last_heartbeat: str | None  # ISO time, UTC
    age_s: float | None
    queues: list[str] = field(default_factory=list)
    batch: int | None = None
    waiting_for: str = ""
    report: dict[str, Any] = field(default_factory=dict)  # what the process said


@dataclass
class Reachability:
    reachable: bool
    error: str = ""
    down_since: str | None = None  # ISO time, UTC: its first failure seen


@dataclass
class QueuedBatch:
    id: int
    plan: str
    status: str
    waiting_for: str


@dataclass
class HealthReport:
    healthy: bool
    problems: list[str]
    workers: list[ProcessHealth]
    beat: ProcessHealth
    sweeper: ProcessHealth
    broker: Reachability
    database: Reachability
    queued: list[QueuedBatch] | None  # None while the results database is away
    # The web server (benchdash/serve.py), once it has beaten: its workers beat while their
    # supervisor lives. None for a web that never did (the Django test client).
    web: ProcessHealth | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def health_report() -> HealthReport:
    broker, beats = _heartbeats()
    database = _database()
    workers = [_process(name[len(liveness.WORKER) :], r) for name, r in _workers(beats)]
    beat = _process("beat", beats.get(liveness.BEAT))
    sweeper = _process("sweeper", beats.get(liveness.SWEEPER), grace_s=2 * _sweep_every_s())
    web = _process(WEB, beats[WEB]) if WEB in beats else None
    queued = None
    if database.reachable:
        try:
            _add_batches(workers)
            queued = _queued(workers)
        except (DatabaseError, InterfaceError) as e:
            database = Reachability(
                False, f"the results database cannot be reached: {_first_line(e)}"
            )
    _note_since(database, broker)
    problems = _problems(broker, database, workers, beat, sweeper)
    if web is not None and not web.alive:
        problems.append(_silent(web) + ": no worker of it runs under its supervisor")
    return HealthReport(
        healthy=not problems,
        problems=problems,
        workers=workers,
        beat=beat,
        sweeper=sweeper,
        broker=broker,
        database=database,
        queued=queued,
        web=web,
    )


def health_banner() -> str:
    """The pages' banner: beat or the housekeeper gone, from Redis alone (one read per
    page). Empty when all is well."""
    try:
        beats = liveness.heartbeats_read()
    except redis.RedisError:
        return "Redis, the task queue, cannot be reached: no batch starts or ends until it is back."
    gone = []
    if liveness.is_gone(beats.get(liveness.BEAT)):
        gone.append("beat (schedules and the sweeper)")
    if _sweeper_gone(beats.get(liveness.SWEEPER)):
        gone.append("the housekeeper (the sweeper of crashed batches)")
    if not gone:
        return ""
    return f"{' and '.join(gone).capitalize()} stopped: see the health page."


def _heartbeats() -> tuple[Reachability, dict[str, dict[str, Any]]]:
    try:
        return Reachability(True), liveness.heartbeats_read()
    except redis.RedisError as e:
        return Reachability(False, f"Redis cannot be reached: {_first_line(e)}"), {}


def _database() -> Reachability:
    try:
        close_old_connections()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except (DatabaseError, InterfaceError) as e:
        return Reachability(False, f"the results database cannot be reached: {_first_line(e)}")
    return Reachability(True)


def _note_since(database: Reachability, broker: Reachability) -> None:
    """The database's outage from its first failure seen (kept in Redis while Redis is
    up), said in its error too; its end, once it answers again."""
    if database.reachable:
        if broker.reachable:
            down_since.seen_up(down_since.DATABASE)
        return
    first = down_since.seen_down(down_since.DATABASE) if broker.reachable else None
    if first is None:
        return
    at = datetime.fromtimestamp(first, UTC)
    database.down_since = at.isoformat(timespec="seconds")
    away_s = max(0.0, datetime.now(UTC).timestamp() - first)
    head = "the results database cannot be reached"
    database.error = database.error.replace(
        head, f"{head} since {at:%Y-%m-%d %H:%M:%S} UTC ({away_s:.0f} s)", 1
    )


def _workers(beats: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    workers = [
        (name, report)
        for name, report in sorted(beats.items())
        if name.startswith(liveness.WORKER) and report["age_s"] < FORGET_AFTER_S
    ]
    for name, report in beats.items():
        if name.startswith(liveness.WORKER) and report["age_s"] >= FORGET_AFTER_S:
            liveness.process_forget(name=name)
    return workers


def _process(name: str, report: dict[str, Any] | None, grace_s: float = 0.0) -> ProcessHealth:
    if report is None:
        return ProcessHealth(name=name, alive=False, last_heartbeat=None, age_s=None)
    at = datetime.fromtimestamp(float(report["at"]), UTC)
    said = {k: v for k, v in report.items() if k not in ("at", "age_s", "queues")}
    return ProcessHealth(
        name=name,
        alive=report["age_s"] <= settings.BENCHDASH_STALE_AFTER_SECONDS + grace_s,
        last_heartbeat=at.isoformat(timespec="seconds"),
        age_s=round(report["age_s"], 1),
        queues=list(report.get("queues", [])),
        report=said,
    )


def _sweep_every_s() -> float:
    entry: dict[str, Any] = settings.CELERY_BEAT_SCHEDULE.get("sweep-stale-runs", {})
    every = entry.get("schedule", 30.0)
    return every.total_seconds() if isinstance(every, timedelta) else float(every)


def _sweeper_gone(report: dict[str, Any] | None) -> bool:
    return not _process("sweeper", report, grace_s=2 * _sweep_every_s()).alive


def _add_batches(workers: list[ProcessHealth]) -> None:
    """Each worker's current batch, and what it waits for, from the results database."""
    running = Batch.objects.filter(status__in=[Status.PREPARING, Status.RUNNING])
    by_worker = {b.worker: b for b in running.only("pk", "worker", "waiting_for", "status")}
    for worker in workers:
        batch = by_worker.get(worker.name)
        if batch is not None:
            worker.batch, worker.waiting_for = batch.pk, batch.waiting_for


def _queued(workers: list[ProcessHealth]) -> list[QueuedBatch]:
    consumed = any(w.alive and BENCHMARKS_QUEUE in w.queues for w in workers)
    batches = (
        Batch.objects.filter(status__in=[Status.QUEUED, Status.WAITING])
        .select_related("plan")
        .order_by("created_at")[:QUEUE_SHOWN]
    )
    queued = []
    for batch in batches:
        why = selectors.batch_waiting_for(batch)
        if not why and not consumed:
            why = "no live worker consumes the benchmarks queue"
        elif not why:
            why = "next in line for a worker"
        plan = batch.plan.name if batch.plan is not None else batch.label
        queued.append(QueuedBatch(id=batch.pk, plan=plan, status=batch.status, waiting_for=why))
    return queued


def _problems(
    broker: Reachability,
    database: Reachability,
    workers: list[ProcessHealth],
    beat: ProcessHealth,
    sweeper: ProcessHealth,
) -> list[str]:
    problems = [r.error for r in (broker, database) if not r.reachable]
    if not broker.reachable:
        return problems  # no heartbeat could be read: nothing more to tell
    for process in (beat, sweeper):
        if not process.alive:
            problems.append(_silent(process))
    problems += [_silent(w) for w in workers if not w.alive]
    for queue, what in ((BENCHMARKS_QUEUE, "benchmarks"), (HOUSEKEEPING_QUEUE, "housekeeping")):
        if not any(w.alive and queue in w.queues for w in workers):
            problems.append(f"no live worker consumes the {queue} queue ({what})")
    return problems


def _silent(process: ProcessHealth) -> str:
    if process.age_s is None:
        return f"{process.name} never beat"
    return f"{process.name} stopped beating {process.age_s:.0f} s ago (at {process.last_heartbeat})"


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
