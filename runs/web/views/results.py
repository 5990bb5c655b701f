"""The results pages: a batch's results and its report, comparisons, and exports. Every
view keeps its state in the query string, so its URL can be shared."""

from __future__ import annotations

import secrets
from typing import Any

from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from runs.errors import InvalidInput
from runs.http import deflated
from runs.http.responses import conditional, streamed
from runs.models import Batch
from runs.services import selectors
from runs.services.answers import (
    exports,
    held,
    relative,
    reports,
    stored_header,
    stored_results,
    tpcc,
)
from runs.services.answers.compare import MAX_SIDES, sides_compare


def _ids(text: str) -> list[int]:
    return [int(p) for p in text.replace(",", " ").split() if p.isdigit()][:200]


def batch_results(request: HttpRequest, batch_id: int) -> HttpResponseBase:
    """The results of a batch (runs/services/answers/stored_results.py: stored once it is
    finished)."""
    baseline = request.GET.get("baseline")
    selected = _ids(",".join(request.GET.getlist("runs")))
    counter = request.GET.get("counter", "")
    if selected or counter:  # a view built for this request, never stored
        found = selectors.batches_with_plan().filter(pk=batch_id).first()
    else:
        found = stored_header.header_with_stored(batch_id, baseline=baseline, part="html")
    if found is None:
        raise Http404("No Batch matches the given query.")
    batch = found
    page = stored_results.batch_page(
        batch=batch, baseline=baseline, selected=selected, counter=counter
    )
    etag = stored_results.shown_etag(page.etag, batch, *_who(request), baseline)
    if page.etag is None:
        # Rendered from our own template, which escaped what it holds.
        context = {"batch": batch, "results_html": mark_safe(page.value)}  # noqa: S308
        return conditional(request, etag, lambda: _page(request, batch, context))
    html, stored_etag = page.value, page.etag
    return conditional(request, etag, lambda: _around_stored(request, batch, html, stored_etag))


RESULTS_PAGE = "runs/batch_results.html"


def _page(request: HttpRequest, batch: Batch, context: dict[str, Any]) -> HttpResponse:
    """The page made whole for this request; a TPC-C batch's figures only when it is sent."""
    return render(request, RESULTS_PAGE, context | {"tpcc": tpcc.batch_tpcc(batch)})


def _around_stored(request: HttpRequest, batch: Batch, html: str, etag: str) -> HttpResponse:
    """The page around its stored part, which is compressed once a process, not for every
    response (runs/http/deflated.py): the header and footer are made for this request."""
    stored = held.value(etag, DEFLATED)
    if stored is held.MISSING:
        stored = deflated.deflated(html.encode())
        held.keep(etag, DEFLATED, stored, len(stored.data) + len(stored.blocks))
    marker = f"<!-- the stored results {secrets.token_hex(8)} -->"
    context = {
        "batch": batch,
        "results_html": mark_safe(marker),  # noqa: S308 - ours
        "tpcc": tpcc.batch_tpcc(batch),  # made for this request: not in the stored part
    }
    head, found, tail = render_to_string(RESULTS_PAGE, context, request).partition(marker)
    if not found:
        raise ValueError(f"{RESULTS_PAGE} does not show results_html")
    before, after = head.encode(), tail.encode()
    response = HttpResponse(before + stored.data + after)
    return deflated.with_deflated(response, before, stored, after)


DEFLATED = "html deflated"  # the part's name in held.py


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


def export_csv(request: HttpRequest, batch_id: int) -> HttpResponseBase:
    """`?what=runs` (one row a run, its summary), `?what=samples` (one row a sample) or
    `?what=relative` (the relative table, one row per test and column; `&axis=`)."""
    batch = get_object_or_404(Batch, pk=batch_id)
    what = request.GET.get("what")
    what = what if what in ("samples", "relative") else "runs"
    if what == "relative":
        try:
            rows = relative.batch_relative_csv(batch=batch, axis=request.GET.get("axis", ""))
        except InvalidInput as refused:
            return HttpResponseBadRequest(str(refused), content_type="text/plain; charset=utf-8")
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
