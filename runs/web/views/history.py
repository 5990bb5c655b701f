"""The history of a plan, batch by batch (its scheduled nights and its launches by hand,
filtered by how launched), with its alerts and each cell's steps."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from runs.analysis.nightly import change_points, regressions
from runs.errors import InvalidInput
from runs.models import Plan
from runs.services.nightly import alerts, history, notifications, schedules

NIGHT_CHOICES = (14, 30, 60, 120, 365)
DEFAULT_NIGHTS = 60
LAUNCHED_CHOICES = (
    ("all", "every launch"),
    ("schedule", "scheduled"),
    ("hand", "by hand (page, API, command)"),
    ("ui", "from the page"),
    ("api", "from the API"),
    ("cli", "from the command"),
)


def plan_history(request: HttpRequest, plan_id: int) -> HttpResponse:
    """`?nights=N`: how many batches a page shows; `?launched=`: which (every launch by
    default, `schedule`, `hand` ...); `?before=B`: the page of those before batch B (the
    newest page without)."""
    plan = get_object_or_404(
        Plan.objects.select_related(
            "target", "load_host", "schedule__crontab", "schedule__interval", "schedule__clocked"
        ),
        pk=plan_id,
    )
    given, before = request.GET.get("nights", ""), request.GET.get("before", "")
    nights = int(given) if given.isdigit() else DEFAULT_NIGHTS
    launched = request.GET.get("launched", "") or "all"
    try:
        past = history.plan_history(
            plan=plan,
            nights=nights,
            before=int(before) if before.isdigit() else None,
            launched=launched,
        )
    except InvalidInput as refused:
        raise Http404(refused.message) from refused
    latest = past.latest_judged
    emails, not_emails = notifications.plan_recipients(plan)
    extras = alerts.history_alerts(plan=plan)
    chart = past.chart(extras["annotations"])
    for night in chart["nights"]:
        night["url"] = reverse("batch_results", args=[night["batch"]])
    return render(
        request,
        "runs/plan_history.html",
        {
            "plan": plan,
            "emails": emails,
            "not_emails": not_emails,
            "schedule": schedules.schedule_describe(plan.schedule) if plan.schedule else None,
            "history": past,
            "nights_shown": len(past.nights),
            "nights_asked": nights,
            "night_choices": NIGHT_CHOICES,
            "launched": launched,
            "launched_choices": LAUNCHED_CHOICES,
            "latest": latest,
            "latest_cells": latest.check.cells if latest else [],
            "rows": list(reversed(past.nights)),  # the table reads newest first
            "window": max(plan.history_nights, regressions.MIN_NIGHTS),
            "min_nights": regressions.MIN_NIGHTS,
            "sigmas": regressions.NOISE_SIGMAS,
            "chart": chart,
            "cell_steps": past.cell_steps(),
            **_paging(plan, nights, past, launched),
            "step_nights": regressions.STEP_NIGHTS,
            "step_pvalue": change_points.MAX_PVALUE,
            "step_min_pct": change_points.MIN_MAGNITUDE * 100,
            **extras,
        },
    )


def _paging(
    plan: Plan, nights: int, past: history.PlanHistory, launched: str
) -> dict[str, str | None]:
    """The links to the pages of older and newer nights, None where there is none."""
    page = past.page
    url = reverse("plan_history", args=[plan.pk]) + f"?nights={nights}"
    url += f"&launched={launched}" if launched != "all" else ""
    return {
        "older_url": f"{url}&before={page.older}" if page and page.older is not None else None,
        "newer_url": (
            url + (f"&before={page.newer}" if page.newer is not None else "")
            if page and page.has_newer
            else None
        ),
    }
