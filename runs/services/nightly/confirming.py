"""A confirmation under way: when its answer is due, and what it waits for now.

An alerted night is re-run at once (alerts.confirmation_launch) and nobody is told before
the re-run answers, so the wait is part of the promise: the answer is due a bounded time
after the night ended. The bound counts the runs the re-run is planned to make (at least
MIN_REPEATS of each flagged cell: a large step is clear after them), each its expected
duration plus an allowance for what surrounds sysbench on a loaded machine (settings set
and read back, the environment, the summary), and one allowance for the check and the
hand-overs. When repeats auto adds a repeat (the step was marginal: the re-run's interval
still too wide for a quarter of it) the bound grows by that run, and the run says why it
was added.

On 2 s nights, one flagged cell: 10 + 3 x (2 + 10) = 46 s after the night's end, 70 s
with the five repeats of a marginal step (measured: 8 to 10 s for a five-fold step, idle
and at load 10; docs/nightly.md).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from runs.analysis.nightly import confirmation
from runs.models import FINISHED_STATUSES, Alert, Batch, Run, Status
from runs.services import selectors

# Beside sysbench's own time, per run: 0.5 s idle, 0.7 s at load 10 were measured (the
# nightly API test); ten times that leaves room for a machine much busier than these.
RUN_ALLOWANCE_S = 10.0
# The night's check, the alert, the hand-over to a worker and the verdict, once.
HAND_OVER_ALLOWANCE_S = 10.0
DEFAULT_RUN_S = 60.0  # a run without an expected duration (a fixed number of events)


def confirmation_due(*, alert: Alert) -> datetime:
    """When the confirmation's answer is due: the night's end plus the planned runs of its
    re-run (those it has now, at least MIN_REPEATS a flagged cell, at most MAX_REPEATS)."""
    night = alert.batch
    start = night.finished_at or alert.created_at
    runs = _runs(alert)
    cells = max(1, len(alert.cells or []))
    planned = min(
        max(len(runs), confirmation.MIN_REPEATS * cells), confirmation.MAX_REPEATS * cells
    )
    each = _run_s(runs) + RUN_ALLOWANCE_S
    return start + timedelta(seconds=HAND_OVER_ALLOWANCE_S + planned * each)


def confirmation_waiting(*, alert: Alert) -> str:
    """What the confirmation waits for now, in words; empty once the alert is judged."""
    if alert.state != Alert.State.CONFIRMING or alert.verdict:
        return ""
    batch = alert.confirmation
    if batch is None:
        return "no re-run was launched"
    batch.refresh_from_db()
    if batch.status in FINISHED_STATUSES:
        return f"the re-run (batch {batch.pk}) ended {batch.status}: its verdict is being made"
    if batch.status in (Status.QUEUED, Status.WAITING):
        return f"the re-run (batch {batch.pk}) is {batch.status}: {_queued_behind(batch)}"
    return f"the re-run (batch {batch.pk}) is {batch.status}: {_progress(batch)}"


def _runs(alert: Alert) -> list[Run]:
    if alert.confirmation_id is None:
        return []
    return list(
        Run.objects.filter(batch_id=alert.confirmation_id)
        .only("id", "position", "status", "reason", "expected_duration_s")
        .order_by("position")
    )


def _run_s(runs: list[Run]) -> float:
    durations = [r.expected_duration_s for r in runs if r.expected_duration_s]
    return max(durations, default=DEFAULT_RUN_S)


def _queued_behind(batch: Batch) -> str:
    why = selectors.batch_waiting_for(batch) or "waiting for a worker to take it"
    busy = Batch.objects.filter(status__in=[Status.PREPARING, Status.RUNNING]).exclude(pk=batch.pk)
    ahead = [
        f"batch {b.pk} ({b.status} since {b.started_at:%H:%M:%S})" for b in busy if b.started_at
    ]
    return why + (f"; the workers run {', '.join(ahead)}" if ahead else "")


def _progress(batch: Batch) -> str:
    runs = list(batch.runs.only("position", "status", "reason").order_by("position"))
    done = sum(r.status in FINISHED_STATUSES for r in runs)
    text = f"{done} of {len(runs)} runs done"
    current = next((r for r in runs if r.status not in FINISHED_STATUSES), None)
    if current is not None and current.reason:
        text += f"; run {current.position + 1} was added: {current.reason}"
    return text
