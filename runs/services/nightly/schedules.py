"""Plans that launch on their own: a cron, interval or clocked schedule kept by
django-celery-beat, and the launch beat asks for.

The schedule is data (a PeriodicTask linked from Plan.schedule), so it can be changed
while beat runs: beat's database scheduler notices the change within seconds.
"""

from __future__ import annotations

import json
import logging
import zoneinfo
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone as dj_timezone
from django_celery_beat.models import (
    ClockedSchedule,
    CrontabSchedule,
    IntervalSchedule,
    PeriodicTask,
)

from runs.errors import InvalidInput
from runs.models import ACTIVE_STATUSES, Batch, LaunchedBy, Plan, Status
from runs.services import batches
from runs.services.nightly import check as nightly_check

logger = logging.getLogger(__name__)

TASK = "runs.tasks.plan_launch_scheduled"
PENDING_STATUSES = (Status.QUEUED, *ACTIVE_STATUSES)
# Each fire expires this long after beat sent it. One worker runs both the benchmarks and
# the fires, so a fire can wait in the queue until the batch it overlapped has ended; the
# expiry tells when it fired, and a fire older than this is dropped by the worker.
FIRE_EXPIRES_S = 6 * 3600
CRON_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")


@dataclass(frozen=True)
class ScheduleInfo:
    kind: str  # cron, interval or clocked
    cron: str | None
    interval_s: int | None
    clocked_at: datetime | None
    timezone: str
    enabled: bool
    last_run_at: datetime | None
    total_run_count: int


@transaction.atomic
def plan_schedule_set(
    *,
    plan: Plan,
    cron: str | None,
    interval_s: int | None,
    clocked_at: datetime | None,
    timezone: str,
    enabled: bool,
    run_now: bool = False,
) -> PeriodicTask:
    """Give a plan its schedule (exactly one of cron, interval_s, clocked_at), or change it.

    A cron schedule runs in `timezone`; a clocked one fires once, at `clocked_at` (read in
    `timezone` when it carries no offset). A clocked time already past is refused, unless
    `run_now` says to launch at once: beat fires a past time as soon as it sees it.
    """
    tz = _zone(timezone)
    kinds = {"cron": cron, "interval_s": interval_s, "clocked_at": clocked_at}
    given = [name for name, value in kinds.items() if value is not None]
    if len(given) != 1:
        raise InvalidInput(
            given[1] if given else "cron", "give exactly one of cron, interval_s, clocked_at"
        )
    task = plan.schedule or PeriodicTask(name=f"benchdash plan {plan.pk}", task=TASK)
    task.interval = task.crontab = task.clocked = None
    task.one_off = False
    if cron is not None:
        task.crontab = _crontab(cron, tz)
    elif interval_s is not None:
        task.interval = _interval(interval_s)
    else:
        assert clocked_at is not None
        if dj_timezone.is_naive(clocked_at):
            clocked_at = dj_timezone.make_aware(clocked_at, tz)
        _check_ahead(clocked_at, tz, run_now)
        task.clocked = ClockedSchedule.objects.get_or_create(clocked_time=clocked_at)[0]
        task.one_off = True  # beat disables a clocked task once it fired
    task.args = json.dumps([plan.pk])
    task.kwargs = "{}"
    task.expires, task.expire_seconds = None, FIRE_EXPIRES_S
    task.enabled = enabled
    # A changed schedule starts afresh (a clocked one that already fired fires again).
    task.last_run_at, task.total_run_count = None, 0
    task.description = f"Launches the plan {plan.name!r} (id {plan.pk})."
    task.save()
    if plan.schedule_id != task.pk:
        plan.schedule = task
        plan.save(update_fields=["schedule"])
    return task


def plan_schedule_delete(*, plan: Plan) -> None:
    if plan.schedule is not None:
        plan.schedule.delete()  # Plan.schedule is SET_NULL
        plan.schedule = None


def schedule_describe(task: PeriodicTask) -> ScheduleInfo:
    cron = interval_s = clocked_at = None
    kind, zone = "clocked", "UTC"
    if task.crontab is not None:
        kind, zone = "cron", str(task.crontab.timezone)
        cron = " ".join(getattr(task.crontab, name) for name in CRON_FIELDS)
    elif task.interval is not None:
        kind = "interval"
        interval_s = int(task.interval.schedule.run_every.total_seconds())
    elif task.clocked is not None:
        clocked_at = task.clocked.clocked_time
    return ScheduleInfo(
        kind=kind,
        cron=cron,
        interval_s=interval_s,
        clocked_at=clocked_at,
        timezone=zone,
        enabled=task.enabled,
        last_run_at=task.last_run_at,
        total_run_count=task.total_run_count,
    )


def fired_at(expires: object) -> datetime | None:
    """When beat sent a fire, from the expiry it stamped on it (see FIRE_EXPIRES_S)."""
    if isinstance(expires, str):
        expires = datetime.fromisoformat(expires)
    if isinstance(expires, datetime):
        return expires - timedelta(seconds=FIRE_EXPIRES_S)
    return None


@transaction.atomic
def plan_launch_scheduled(*, plan_id: int, fired_at: datetime | None = None) -> Batch | None:
    """What beat's fire does: launch the plan as a user would, unless a batch of the plan
    is pending, or was running when the fire happened (it waited in the queue meanwhile).
    Such a fire is recorded as a skipped batch: fires never queue up behind a batch.
    """
    fired_at = fired_at or dj_timezone.now()
    # Locking the plan's row serialises two fires that arrive together.
    plan = Plan.objects.select_for_update(of=("self",)).filter(pk=plan_id).first()
    if plan is None:
        logger.warning("scheduled launch of plan %s: the plan is gone", plan_id)
        return None
    busy = (
        plan.batches.exclude(status=Status.SKIPPED)
        .filter(
            Q(status__in=PENDING_STATUSES) | Q(created_at__lte=fired_at, finished_at__gt=fired_at)
        )
        .order_by("created_at")
        .first()
    )
    if busy is not None:
        return batch_record_unlaunched(
            plan=plan,
            status=Status.SKIPPED,
            error=f"skipped: batch {busy.pk} of this plan is still running",
            fired_at=fired_at,
        )
    try:
        return batches.batch_launch(plan=plan, launched_by=LaunchedBy.SCHEDULE)
    except InvalidInput as e:
        # The plan no longer passes its checks: a nightly launch still leaves a record.
        return batch_record_unlaunched(
            plan=plan,
            status=Status.FAILED,
            error=f"not launched: {e.field}: {e.message}",
            fired_at=fired_at,
        )


def batch_record_unlaunched(*, plan: Plan, status: str, error: str, fired_at: datetime) -> Batch:
    """A batch without runs that records a scheduled launch which did not happen, and why."""
    now = dj_timezone.now()
    logger.info("plan %s: %s", plan.pk, error)
    batch = Batch.objects.create(
        plan=plan,
        target=plan.target,
        load_host=plan.load_host,
        params={"fired_at": fired_at.isoformat()},
        seed=0,
        status=status,
        launched_by=LaunchedBy.SCHEDULE,
        error=error,
        finished_at=now,
    )
    nightly_check.batch_finished(batch=batch)  # a lost night is reported
    return batch


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _zone(name: str) -> zoneinfo.ZoneInfo:
    if name not in _zones():
        raise InvalidInput("timezone", f"{name!r} is not a time zone name such as Europe/Paris")
    return zoneinfo.ZoneInfo(name)


def _check_ahead(clocked_at: datetime, tz: zoneinfo.ZoneInfo, run_now: bool) -> None:
    now = dj_timezone.now()
    if clocked_at < now and not run_now:
        raise InvalidInput(
            "clocked_at",
            f"{clocked_at.astimezone(tz):%Y-%m-%d %H:%M:%S %Z} is in the past (it is now "
            f"{now.astimezone(tz):%Y-%m-%d %H:%M:%S %Z}): give a later time, or ask to run "
            "it now",
        )


def _crontab(cron: str, tz: zoneinfo.ZoneInfo) -> CrontabSchedule:
    fields = cron.split()
    if len(fields) != len(CRON_FIELDS):
        raise InvalidInput("cron", "give five fields: minute hour day-of-month month day-of-week")
    values = dict(zip(CRON_FIELDS, fields, strict=True))
    try:
        CrontabSchedule(**values, timezone=tz).full_clean()
    except DjangoValidationError as e:
        reasons = "; ".join(e.messages)
        raise InvalidInput("cron", f"{cron!r} is not a valid cron expression: {reasons}") from e
    return CrontabSchedule.objects.get_or_create(**values, timezone=tz)[0]


def _interval(seconds: int) -> IntervalSchedule:
    if seconds < 1:
        raise InvalidInput("interval_s", "must be at least 1 second")
    return IntervalSchedule.objects.get_or_create(every=seconds, period=IntervalSchedule.SECONDS)[0]
