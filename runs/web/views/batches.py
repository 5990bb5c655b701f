"""Pages of batches: the home page, a running batch with its progress, cancel, and a run's
live page with its event stream. Thin: they read through selectors and write through
services."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from runs.analysis import run_facts
from runs.columns import BatchEnvironment
from runs.http.responses import json_response
from runs.models import FINISHED_STATUSES, Batch, Plan, Run, Status, Target
from runs.services import batches, live_page, permissions, run_selectors, selectors
from runs.web import events

BATCHES_PER_PAGE = 50


def home(request: HttpRequest) -> HttpResponse:
    """The batches, newest first, filtered by plan, target and status (in the URL)."""
    status = request.GET.get("status") or None
    filters: dict[str, Any] = {
        "plan": _int(request.GET.get("plan")),
        "target": _int(request.GET.get("target")),
        "status": status if status in Status.values else None,
    }
    batches = selectors.batches_filtered(
        plan=filters["plan"], target=filters["target"], status=filters["status"]
    )
    page = Paginator(selectors.batch_list_rows(batches), BATCHES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    # Each row's links and dates made here, not by the template: 150 URL reversals and 100
    # date filters were a fifth of the page's CPU (docs/performance/load.md).
    detail, results_of, plan_of = (
        _url_of(n) for n in ("batch_detail", "batch_results", "plan_edit")
    )
    rows = [
        {
            **row,
            "waiting_for": selectors.batch_list_waiting_for(row),
            "detail_url": detail(row["id"]),
            "results_url": results_of(row["id"]),
            "plan_url": plan_of(row["plan_id"]) if row["plan_id"] else "",
            "created_text": _minute(row["created_at"]),
            "finished_text": _minute(row["finished_at"]),
        }
        for row in page.object_list
    ]
    return render(
        request,
        "runs/home.html",
        {
            "page": page,
            "batches": rows,
            "filters": filters,
            "plans": Plan.objects.only("id", "name"),
            "targets": Target.objects.only("id", "name"),
            "statuses": Status.values,
            "query": _query_without_page(request),
        },
    )


def _url_of(name: str) -> Callable[[int], str]:
    """The URL of `name` for any id, reversed once."""
    marker = "2147483647"
    pattern = reverse(name, args=[int(marker)])
    head, _, tail = pattern.partition(marker)
    return lambda pk: f"{head}{pk}{tail}"


def _minute(when: datetime | None) -> str:
    """As the template's `date:"Y-m-d H:i"` writes it, in the current time zone."""
    return timezone.localtime(when).strftime("%Y-%m-%d %H:%M") if when else ""


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def _query_without_page(request: HttpRequest) -> str:
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


def _stages(batch: Batch) -> list[dict[str, Any]]:
    """The data set's stages (prepare, a script's check, cleanup) with how long each took:
    a TPC-C prepare takes a while per warehouse."""
    shown = []
    for stage in batch.stages if isinstance(batch.stages, list) else []:
        try:
            took = datetime.fromisoformat(stage["finished_at"]) - datetime.fromisoformat(
                stage["started_at"]
            )
            seconds: float | None = took.total_seconds()
        except (KeyError, TypeError, ValueError):
            seconds = None
        shown.append({**stage, "seconds": seconds})
    return shown


def batch_detail(request: HttpRequest, batch_id: int) -> HttpResponse:
    """The live page of a batch: progress through the matrix (each cell's runs counted),
    the current run's chart and lines, cancel, and a page of its runs (`?page=`, by
    default the one holding the current run). A finished batch links to its results."""
    batch = get_object_or_404(selectors.batches_with_plan(), pk=batch_id)
    batch.waiting_for = selectors.batch_waiting_for(batch)
    progress = selectors.batch_progress(batch)
    pages = max(1, -(-progress.total // live_page.RUNS_PER_PAGE))
    asked = request.GET.get("page", "")
    number = int(asked) if asked.isdigit() else live_page.batch_page_of(progress)
    number = min(max(1, number), pages)
    grid = live_page.batch_grid(batch)
    return render(
        request,
        "runs/batch_detail.html",
        {
            "batch": batch,
            "runs": live_page.batch_runs_page(batch, number),
            "progress": progress,
            "grid": grid,
            "latency_label": live_page.batch_latency_label(batch),
            "stages": _stages(batch),
            "page_number": number,
            "pages": pages,
            "page_first": (number - 1) * live_page.RUNS_PER_PAGE + 1,
            "page_last": min(number * live_page.RUNS_PER_PAGE, progress.total),
            "active": batch.status not in FINISHED_STATUSES,
        },
    )


def batch_progress(request: HttpRequest, batch_id: int) -> HttpResponse:
    """What the live page polls: status, progress, the current run, the grid's cells, and
    the status and figures of the runs of its page (`?page=`, 1 by default)."""
    batch = get_object_or_404(Batch, pk=batch_id)
    tail = request.GET.get("tail", "")
    if tail.isdigit():  # the lines a run printed before the page followed it
        return json_response({"tail": selectors.run_log_tail(batch, int(tail))})
    progress = selectors.batch_progress(batch)
    current = progress.current
    asked = request.GET.get("page", "")
    page = live_page.batch_page_runs(batch, int(asked) if asked.isdigit() else 1)
    return json_response(
        {
            "status": batch.status,
            "waiting_for": selectors.batch_waiting_for(batch),
            "error": batch.error,
            "finished": progress.finished,
            "total": progress.total,
            "remaining_s": progress.remaining_s,
            "running_share": progress.running_share,
            "counts": progress.counts,
            "counts_text": progress.counts_text,
            "current": None
            if current is None
            else {
                "id": current.pk,
                "number": progress.current_number,
                "label": current.label,
                "status": current.status,
                "events_url": reverse("run_events", args=[current.pk]),
                "expected_s": current.expected_duration_s,
                "started_at": current.started_at,
            },
            "grid": live_page.batch_grid(batch).cells_json(),
            "runs": page.statuses,
            # What a finished run's row shows, filled in without a reload.
            "figures": page.figures,
        }
    )


@require_POST
def batch_cancel(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_object_or_404(Batch.objects.select_related("plan"), pk=batch_id)
    permissions.require_cancel(request.user, batch)
    batches.batch_cancel(batch=batch, user=request.user)
    messages.info(request, f"Batch {batch.pk}: cancel requested.")
    return redirect("batch_detail", batch_id=batch.pk)


# The run page holds this many of the log's last lines; the filter searches the rest.
RUN_PAGE_LOG_LINES = 2000
LOG_MATCHES = 2000


def run_live(request: HttpRequest, run_id: int) -> HttpResponse:
    """A run: live while it runs, then everything sysbench printed."""
    run = get_object_or_404(Run.objects.select_related("batch__plan", "batch__target"), pk=run_id)
    log = run_facts.log_tail(run.raw_log, limit=RUN_PAGE_LOG_LINES)
    return render(
        request,
        "runs/run_live.html",
        {
            "run": run,
            "batch": run.batch,
            "progress": selectors.batch_progress(run.batch),
            "server_changes": _server_changes(run),
            "environment": _environment(run),
            "facts": run_selectors.run_facts_of(run),
            "tpcc": run_selectors.run_tpcc(run),
            "latency_label": live_page.batch_latency_label(run.batch),
            "log": log,
            "log_lines": [text for _, text in log.lines],
            "log_first": log.lines[0][0] if log.lines else 1,
            "finished": run.status in FINISHED_STATUSES,
        },
    )


def run_log(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run's raw log: the whole text to download, or with ?match= the matching lines
    (numbered, as JSON) for the run page's filter."""
    run = get_object_or_404(Run.objects.only("id", "raw_log"), pk=run_id)
    text = request.GET.get("match")
    if text is not None:
        found = run_facts.log_matches(run.raw_log, text, limit=LOG_MATCHES)
        return json_response(
            {"lines": found.lines, "total": found.total, "complete": found.complete}
        )
    response = HttpResponse(run.raw_log, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}.log"'
    return response


def _server_changes(run: Run) -> list[tuple[str, str, str]]:
    """(variable, in the batch's snapshot, in this run) for what this run's settings
    changed: the run's own values, not the batch's."""
    before = run_selectors.run_server_before(run)  # its own target's snapshot
    changed = run_selectors.run_changed_variables(run)
    return [(name, str(before.get(name, "")), value) for name, value in sorted(changed.items())]


def _environment(run: Run) -> dict[str, Any]:
    """What the run ran in, as the results page's panel says it: the server variables as
    this run saw them (those its settings changed marked), the load host's and the
    database host's facts (kernel, CPU governor, network cards...)."""
    recorded = BatchEnvironment.load(run_selectors.run_environment(run))
    return {
        "version": recorded.server_version,
        "variables": sorted(recorded.server_variables.items()),
        "changed": set(run_selectors.run_changed_variables(run)),
        "load_host": recorded.load_host,
        "server_host": recorded.server_host,
    }


async def run_events(request: HttpRequest, run_id: int) -> HttpResponseBase:
    """Server-Sent Events of a run. A reconnecting EventSource sends Last-Event-ID, the
    sequence number of the last sample it got, and resumes right after it. A finished
    run's events are one whole answer (compressed like a page), a running one's a stream."""
    after_text = request.headers.get("Last-Event-ID") or request.GET.get("after") or "0"
    after = int(after_text) if after_text.isdigit() else 0
    exists, whole = await events.finished_events(run_id, after=after)
    if not exists:
        return StreamingHttpResponse(iter(()), status=404)
    if whole is not None:
        response: HttpResponseBase = HttpResponse(whole, content_type="text/event-stream")
    else:
        response = StreamingHttpResponse(
            events.run_events(run_id, after=after), content_type="text/event-stream"
        )
        response["X-Accel-Buffering"] = "no"  # let proxies pass each event at once
    response["Cache-Control"] = "no-cache"
    return response
