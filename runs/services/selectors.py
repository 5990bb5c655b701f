"""Reads: the queries pages and the API need, each in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from django.db.models import (
    Count,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.functions import Right
from django.utils import timezone

from runs.analysis import results
from runs.analysis.nightly import regressions
from runs.execution import locks
from runs.models import (
    ACTIVE_STATUSES,
    FINISHED_STATUSES,
    Batch,
    LoadHost,
    Plan,
    Run,
    Sample,
    Status,
    Target,
)

# Runs that ran to an end of their own, as against cancelled or skipped ones.
RAN_STATUSES = (Status.DONE, Status.FAILED, Status.INTERRUPTED)


def batches_to_choose(limit: int = 30) -> QuerySet[Batch]:
    """The newest batches, by what a choice of one shows: number, plan, label, date, status."""
    return (
        Batch.objects.select_related("plan")
        .only("id", "label", "created_at", "status", "plan__name")
        .order_by("-created_at", "-pk")[:limit]
    )


def recent_batches(limit: int = 50) -> QuerySet[Batch]:
    return Batch.objects.select_related("plan", "target", "load_host")[:limit]


def batches_with_plan() -> QuerySet[Batch]:
    return Batch.objects.select_related("plan", "target", "load_host")


def batch_runs(batch: Batch) -> QuerySet[Run]:
    return (
        batch.runs.order_by("position")
        .select_related("target")  # named on a servers axis (results.run_axes)
        .defer("raw_log", "reports", "histogram")
    )


@dataclass(frozen=True)
class Progress:
    total: int
    finished: int
    current: Run | None
    remaining_s: float | None  # sysbench time still to run, from the expected durations
    running_share: float = 0.0  # how far the running cell is through its expected time
    counts: dict[str, int] = field(default_factory=dict)  # runs by status

    @property
    def counts_text(self) -> str:
        """The runs that ended by how they ended, when not all ran: "1 cancelled, 7 skipped"."""
        ended = [(status, self.counts.get(status, 0)) for status in FINISHED_STATUSES]
        if all(n == 0 for status, n in ended if status != Status.DONE):
            return ""
        return ", ".join(f"{n} {status.value}" for status, n in ended if n)

    @property
    def current_number(self) -> int | None:
        return self.current.position + 1 if self.current else None


def batch_progress(batch: Batch) -> Progress:
    """Counted by PostgreSQL (runs by status, the queued runs' expected time) and the
    current run read alone: two small answers whatever the batch's number of runs."""
    by_status = (
        batch.runs.order_by()
        .values_list("status")
        .annotate(
            n=Count("id"),
            expected=Sum("expected_duration_s"),
            unknown=Count("id", filter=Q(expected_duration_s__isnull=True)),
        )
    )
    counts: dict[str, int] = {}
    remaining: float | None = 0.0
    for status, n, expected, unknown in by_status:
        counts[status] = n
        if status == Status.QUEUED:
            remaining = None if unknown else float(expected or 0.0)
    current = (
        batch.runs.filter(status__in=ACTIVE_STATUSES)
        .order_by("position")
        # batch_id too: the related manager reads it on the row it returns.
        .only(
            "id",
            "batch_id",
            "position",
            "status",
            "threads",
            "settings",
            "cell_key",
            "round",
            "expected_duration_s",
            "started_at",
        )
        .first()
    )
    running_left, running_share = _running_cell(current)
    return Progress(
        total=sum(counts.values()),
        finished=sum(n for status, n in counts.items() if status in FINISHED_STATUSES),
        current=current,
        remaining_s=None if remaining is None or running_left is None else remaining + running_left,
        running_share=running_share,
        counts=counts,
    )


def _running_cell(current: Run | None) -> tuple[float | None, float]:
    """The running cell's time still to run and its share done, from its expected time."""
    if current is None or current.status != Status.RUNNING or current.started_at is None:
        return (current.expected_duration_s if current else 0.0), 0.0
    expected = current.expected_duration_s
    if expected is None or expected <= 0:
        return None, 0.0
    elapsed = (timezone.now() - current.started_at).total_seconds()
    return max(0.0, expected - elapsed), min(1.0, max(0.0, elapsed / expected))


# What a list of batches does not show: the environment alone is some 650 variables.
LIST_DEFERRED = (
    "params",
    "environment",
    "original_settings",
    "warnings",
    "stages",
    "analysis",
    "notified",
    "night",
    "notes",
    # and of what it names, only the name: a plan's matrix, a target's password, a load
    # host's keys and facts were read and decoded for every row (351 JSON documents for a
    # page of 50 batches, 51 without them).
    "plan__options",
    "plan__threads",
    "plan__server_settings",
    "plan__option_axes",
    "plan__notify_emails",
    "plan__auto",
    "target__password",
    "load_host__private_key",
    "load_host__host_key",
    "load_host__seen_host_key",
    "load_host__facts",
)


def batches_counted() -> QuerySet[Batch]:
    """Batches with runs_total, and the runs that ran (done, failed, interrupted), were
    cancelled, or skipped: a batch cancelled in its first run is "0 / 8 · 1 cancelled ·
    7 skipped", not "8 / 8 done" (the API's runs_done is runs_ran).

    The counts are subqueries, not a GROUP BY over every batch: PostgreSQL evaluates them
    after the ORDER BY ... LIMIT of a page, for the page's batches only, so that a list of
    50 costs the same beside 30 batches or 30,000."""
    return _batches_counted().all()


@cache
def _batches_counted() -> QuerySet[Batch]:
    """Built once a process (never evaluated itself: each caller gets a copy): its
    subqueries (five then) took 2.5 ms to build for every batch list."""
    return (
        Batch.objects.select_related("plan", "target", "load_host", "launched_by_user")
        .annotate(
            runs_total=_runs_count(),
            runs_ran=_runs_count(status__in=RAN_STATUSES),
            runs_cancelled=_runs_count(status=Status.CANCELLED),
            runs_skipped=_runs_count(status=Status.SKIPPED),
        )
        .order_by("-created_at", "-pk")
    )


def _runs_count(**conditions: Any) -> Subquery:
    """The batch's runs that meet `conditions`, counted by one index lookup."""
    runs = (
        Run.objects.filter(batch=OuterRef("pk"), **conditions)
        .order_by()
        .annotate(n=Func("id", function="COUNT", output_field=IntegerField()))
        .values("n")
    )
    return Subquery(runs, output_field=IntegerField())


def batches_listed() -> QuerySet[Batch]:
    """batches_counted() for a list: without the large JSON that only a batch's own page
    shows."""
    return batches_counted().defer(*LIST_DEFERRED)


# What a row of the batch list shows, read as values: 50 batches with their plan, target,
# load host and user as models cost 7-12 ms of CPU to build, most of the list's (issue 39).
LIST_ROW = (
    "id", "status", "waiting_for", "label", "created_at", "finished_at", "launched_by",
    "plan_id", "plan__name", "target__name", "launched_by_user__username",
    "runs_total", "runs_ran", "runs_cancelled", "runs_skipped",
)  # fmt: skip


def batch_list_rows(batches: QuerySet[Batch]) -> QuerySet[Batch, dict[str, Any]]:
    """The batches as the list shows them (LIST_ROW), in their order."""
    return batches.values(*LIST_ROW)


def batch_list_waiting_for(row: dict[str, Any]) -> str:
    """batch_waiting_for() of a listed row: a queued or waiting batch is looked up again
    (a few at most), the others say what they stored."""
    if row["status"] not in (Status.QUEUED, Status.WAITING):
        return str(row["waiting_for"])
    batch = Batch.objects.filter(pk=row["id"]).first()
    return batch_waiting_for(batch) if batch is not None else ""  # deleted meanwhile


def batches_filtered(
    *,
    plan: int | None = None,
    target: int | None = None,
    status: str | None = None,
    launched_by: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    regressed: bool | None = None,
) -> QuerySet[Batch]:
    conditions = {
        "plan_id": plan,
        "target_id": target,
        "status": status,
        "launched_by": launched_by,
        "created_at__gte": created_after,
        "created_at__lt": created_before,
    }
    found = batches_listed().filter(**{k: v for k, v in conditions.items() if v is not None})
    if regressed is None:
        return found
    # A nightly check stores its verdict in analysis["status"]; other batches have none.
    flagged = Q(analysis__status=regressions.REGRESSION)
    return (
        found.filter(flagged)
        if regressed
        else found.filter(analysis__has_key="status").exclude(flagged)
    )


# --- pages (the web UI) ------------------------------------------------------------------
# Each page reads a bounded number of queries, whatever the size of the batch: one for the
# runs, and for the charts a bounded number of points bucketed in the database
# (runs/services/answers/timeseries.py).


def targets_listed() -> QuerySet[Target]:
    return Target.objects.select_related("server_host").annotate(
        plan_count=Count("plans", distinct=True), batch_count=Count("batches", distinct=True)
    )


def loadhosts_listed() -> QuerySet[LoadHost]:
    return LoadHost.objects.annotate(
        plan_count=Count("plans", distinct=True), batch_count=Count("batches", distinct=True)
    )


def plans_listed() -> QuerySet[Plan]:
    return Plan.objects.select_related(
        "target", "load_host", "script", "schedule__crontab", "schedule__interval"
    ).annotate(batch_count=Count("batches"))


def plans_scheduled() -> QuerySet[Plan]:
    return plans_listed().filter(schedule__isnull=False)


def plan_last_batches(plan: Plan, limit: int = 10) -> QuerySet[Batch]:
    return batches_listed().filter(plan=plan)[:limit]


def export_runs(batch: Batch) -> QuerySet[Run]:
    return (
        batch.runs.order_by("position")
        .select_related("target", "batch__target")  # each run's server, by name
        .defer("raw_log", "histogram")
    )


def export_samples(batch: Batch) -> QuerySet[Sample]:
    return Sample.objects.filter(run__batch=batch).order_by("run__position", "seq")


def run_log_tail(batch: Batch, run_id: int, *, lines: int = 40, chars: int = 8000) -> list[str]:
    """The last lines of a run's raw log (read from its end, however long it is)."""
    text = (
        Run.objects.filter(pk=run_id, batch=batch)
        .annotate(tail=Right("raw_log", chars))
        .values_list("tail", flat=True)
        .first()
    )
    return (text or "").splitlines()[-lines:]


# A side's figures and its server host's mean CPU busy %
SideFigures = tuple[list[results.RunFigures], float | None]


def batch_waiting_for(batch: Batch) -> str:
    """What the batch waits for, now. A queued or waiting batch's stored reason was true
    when it was written ("busy with batch 1"): the lock's holder is looked up again, so
    the reason never outlives the batch that held the lock. A running batch's reason (a
    quiet host, a target away) is kept current by its worker."""
    if batch.status not in (Status.QUEUED, Status.WAITING):
        return batch.waiting_for
    holder = locks.locks_holder(batch=batch)
    if holder:
        return holder
    return "next in line for a worker" if batch.status == Status.WAITING else ""
