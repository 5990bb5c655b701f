"""The results pages: a batch's results and its report, comparisons, and exports. Every
view keeps its state in the query string, so its URL can be shared."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render
from django.utils.safestring import mark_safe

from runs.http.responses import conditional, streamed
from runs.models import Batch
from runs.services import selectors
from runs.services.answers import exports, relative, reports, stored_results
from runs.services.answers.compare import MAX_SIDES, sides_compare


def _ids(text: str) -> list[int]:
    return [int(p) for p in text.replace(",", " ").split() if p.isdigit()][:200]


def batch_results(request: HttpRequest, batch_id: int) -> HttpResponseBase:
    """The results of a batch (runs/services/answers/stored_results.py: stored once it is
    finished)."""
    baseline = request.GET.get("baseline")
    batches = stored_results.with_stored(
        selectors.batches_with_plan(), baseline=baseline, part="html"
    )
    batch = get_object_or_404(batches, pk=batch_id)
    page = stored_results.batch_page(
        batch=batch,
        baseline=baseline,
        selected=_ids(",".join(request.GET.getlist("runs"))),
        counter=request.GET.get("counter", ""),
    )
    # Rendered from our own template, which escaped what it holds.
    results_html = mark_safe(page.value)  # noqa: S308
    etag = stored_results.shown_etag(page.etag, batch, *_who(request), baseline)
    context = {"batch": batch, "results_html": results_html}
    return conditional(request, etag, lambda: render(request, "runs/batch_results.html", context))


def batch_report(request: HttpRequest, batch_id: int) -> HttpResponseBase:
    """The batch's report to share: one HTML file, readable offline."""
    baseline = request.GET.get("baseline")
    batches = stored_results.with_stored(
        selectors.batches_with_plan(), baseline=baseline, part="results"
    )
    batch = get_object_or_404(batches, pk=batch_id)
    stored = stored_results.batch_stored(batch=batch, baseline=baseline)
    etag = stored_results.shown_etag(stored.etag, batch, "report")
    return conditional(request, etag, lambda: _report(batch, stored))


def _report(batch: Batch, stored: stored_results.Stored) -> HttpResponse:
    html = reports.batch_report_html(batch=batch, found=stored.value)
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{reports.report_filename(batch)}"'
    return response


def _who(request: HttpRequest) -> tuple[Any, ...]:
    """What the page's header shows of who asks: the user, and the token of the logout
    form (a new one after each login)."""
    get_token(request)  # the secret of a first visit is made now, before the digest
    return request.user.pk, request.META.get("CSRF_COOKIE", "")


# --- compare ------------------------------------------------------------------------------------


def compare(request: HttpRequest) -> HttpResponse:
    """Any batches and runs side by side: `?s=b12&s=b13&s=r345`, the first the baseline."""
    given = [k.strip() for k in request.GET.getlist("s")]
    given = [f"r{k}" if k.isdigit() else k for k in given]  # a bare number is a run id
    keys = [k for k in given if k[:1] in ("b", "r") and k[1:].isdigit()]
    keys = list(dict.fromkeys(keys))[:MAX_SIDES]
    found = sides_compare(keys=keys)
    return render(
        request,
        "runs/compare.html",
        {
            "sides": found.sides,
            "pairs": found.pairs,
            "keys": keys,
            "chart": {"series": found.chart, "unit": "tps", "reference": None},
            "recent": selectors.batches_to_choose(30),
            "colours": found.colours,
            "host_metrics": found.host_metrics,
            "waits_moved": found.waits_moved,
            "latency_label": found.latency_label,
        },
    )


# --- exports --------------------------------------------------------------------------------------


def export_csv(request: HttpRequest, batch_id: int) -> StreamingHttpResponse:
    """`?what=runs` (one row a run, its summary), `?what=samples` (one row a sample) or
    `?what=relative` (the relative table, one row per test and column; `&axis=`)."""
    batch = get_object_or_404(Batch, pk=batch_id)
    what = request.GET.get("what")
    what = what if what in ("samples", "relative") else "runs"
    if what == "relative":
        rows = relative.batch_relative_csv(batch=batch, axis=request.GET.get("axis", ""))
    elif what == "samples":
        rows = exports.batch_samples_csv(batch)
    else:
        rows = exports.batch_runs_csv(batch)
    return streamed(
        request, rows, content_type="text/csv; charset=utf-8",
        filename=f"batch-{batch.pk}-{what}.csv",
    )  # fmt: skip


def export_json(request: HttpRequest, batch_id: int) -> StreamingHttpResponse:
    batch = get_object_or_404(selectors.batches_with_plan(), pk=batch_id)
    return streamed(
        request, exports.batch_json(batch), content_type="application/json",
        filename=f"batch-{batch.pk}.json",
    )  # fmt: skip
