"""What a worker that gave up on the results database leaves in Redis for the sweeper.

A results database away longer than the worker waits for it (3 x
BENCHDASH_RESULTS_DB_OUTAGE_S after it stopped the run) leaves the worker holding what no
table has yet: the running cell's last samples, counter readings, raw lines and final
report, and why it stopped. Rather than drop them, the worker hands them to Redis with the
outage (`handover_leave`) and lets the batch go. Once the database is back, the sweeper
(runs/services/recovery.py) reads them (`handover_read`), stores them (`run_store_handover`)
and ends the batch with its real cause, the outage and its real length, instead of a
worker that stopped beating.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import redis
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.db.models import Field
from django.utils import timezone

from runs.execution.outages.outage_buffer import OutageBuffer
from runs.execution.run_results import RESULT_FIELDS
from runs.execution.stream import live
from runs.execution.stream.sample_writes import run_write_records
from runs.execution.stream.sink import SampleSink
from runs.models import Batch, Run

logger = logging.getLogger(__name__)


@dataclass
class Handover:
    """The outage the worker gave up on, and what it held of its running cell."""

    outage_started: str  # ISO 8601, as every datetime here: JSON has no other
    outage_error: str
    gave_up_at: str
    limit_s: float
    settings_restored_at: str | None
    warnings: list[str] = field(default_factory=list)  # the batch's, not stored yet
    run_id: int | None = None
    run_fields: dict[str, Any] = field(default_factory=dict)
    samples: list[dict[str, Any]] = field(default_factory=list)
    counters: list[dict[str, Any]] = field(default_factory=list)
    log: tuple[int, str] = (0, "")  # the raw log: characters stored, then this chunk

    def cause(self, back_at: datetime, restarted: bool) -> str:
        """The batch's ending: the outage with its real length, and what became of it."""
        started = datetime.fromisoformat(self.outage_started)
        gave_up = datetime.fromisoformat(self.gave_up_at)
        seconds = (back_at - started).total_seconds()
        restored = "restored" if self.settings_restored_at else "not restored (the sweeper tries)"
        until = (
            f"to {back_at:%H:%M:%S} UTC ({seconds:.0f} s"
            if restarted  # it came back when its server started again
            else f"UTC until {back_at:%H:%M:%S} UTC at the latest ({seconds:.0f} s at most"
        )
        return (
            f"the results database was unreachable from {started:%H:%M:%S} {until}: "
            f"{self.outage_error}); the worker gave up waiting for it at {gave_up:%H:%M:%S} "
            f"UTC, sysbench stopped and the server's settings {restored}, and handed what it "
            "held to Redis: stored from there once the database was back; the batch's "
            "remaining runs were not started"
        )


def handover_key(batch_id: int) -> str:
    return f"benchdash:{live.installation()}:batch:{batch_id}:handover"


def handover_leave(
    *, batch: Batch, store: OutageBuffer, held: tuple[Run, SampleSink] | None
) -> bool:
    """What the worker holds, to Redis, with the outage it gives up on; whether Redis
    took it (if not, the sweeper finds a silent batch, as after a crash)."""
    outage = store.outages[-1]
    left = Handover(
        outage_started=outage.began.isoformat(),  # the earliest it can have gone
        outage_error=outage.error,
        gave_up_at=timezone.now().isoformat(),
        limit_s=store.limit_s,
        settings_restored_at=(
            batch.settings_restored_at.isoformat() if batch.settings_restored_at else None
        ),
        warnings=store.warnings()[:-1],  # the earlier outages, over
    )
    if held is not None:
        run, sink = held
        left.run_id = run.pk
        left.run_fields = {name: getattr(run, name) for name in RESULT_FIELDS}
        left.run_fields["warnings"] = [*run.warnings, *sink.warnings()]
        left.samples, left.counters, left.log = sink.held()
    try:
        live.redis_client().set(
            handover_key(batch.pk),
            json.dumps(asdict(left), cls=DjangoJSONEncoder),
            ex=live.RECENT_TTL_S,
        )
    except redis.RedisError as e:
        logger.error("batch %s: nothing handed to Redis: %s", batch.pk, e)
        return False
    return True


def handover_read(batch_id: int) -> Handover | None:
    try:
        raw = live.redis_client().get(handover_key(batch_id))
    except redis.RedisError as e:
        logger.warning("batch %s: handover not read: %s", batch_id, e)
        return None
    if raw is None:
        return None
    data = json.loads(raw)
    data["log"] = tuple(data["log"])
    return Handover(**data)


def handover_drop(batch_id: int) -> None:
    try:
        live.redis_client().delete(handover_key(batch_id))
    except redis.RedisError as e:
        logger.warning("batch %s: handover not removed: %s", batch_id, e)


def results_db_back_at(started: datetime) -> tuple[datetime, bool]:
    """When the results database came back after an outage that began at `started`: its
    server's start when it was restarted meanwhile (exact), or now (a bound); and
    whether it was restarted."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_postmaster_start_time(), now()")
        server_started, now = cursor.fetchone()
    if server_started > started:
        return server_started, True
    return now, False


def run_store_handover(*, run: Run, left: Handover, cause: str) -> None:
    """The run as its worker left it: its last samples, counter readings and raw lines
    stored (none twice), its end, and the outage told with its real length."""
    run_write_records(run, samples=left.samples, counters=left.counters, log=left.log)
    for name, value in left.run_fields.items():
        column = Run._meta.get_field(name)
        setattr(run, name, column.to_python(value) if isinstance(column, Field) else value)
    run.warnings = [*run.warnings, cause]
    run.save(update_fields=RESULT_FIELDS)
    live.publish_status(run)
