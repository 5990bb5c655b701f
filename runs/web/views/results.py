"""The results pages: a batch's results and its report, comparisons, and exports. Every
view keeps its state in the query string, so its URL can be shared."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render

from runs.analysis import charts, results
from runs.columns import BatchEnvironment
from runs.frozen import FrozenPlan
from runs.models import Batch, Run
from runs.services import exports, reports, selectors
from runs.services import results as result_service
from runs.services.compare import MAX_SIDES, sides_compare
from runs.web.responses import streamed


def _ids(text: str) -> list[int]:
    return [int(p) for p in text.replace(",", " ").split() if p.isdigit()][:200]


def batch_results(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_object_or_404(selectors.batches_with_plan(), pk=batch_id)
    return render(request, "runs/batch_results.html", _results_page(request, batch))


def _results_page(request: HttpRequest, batch: Batch) -> dict[str, Any]:
    """The batch's results (runs/services/results.py) and what only the page draws: the
    runs over time, with the counter asked for."""
    read = result_service.batch_results_runs(batch=batch)
    found = result_service.batch_results(
        batch=batch,
        baseline=request.GET.get("baseline"),
        selected=_ids(",".join(request.GET.getlist("runs"))),
        read=read,
    )
    counter_names, gauges = charts.counter_names(read.figures)
    counter = request.GET.get("counter", "")
    counter = counter if counter in counter_names else ""
    time_charts = result_service.batch_time_charts(
        batch=batch, read=read, found=found, counter=counter, gauge=counter in gauges
    )
    return {
        "batch": batch,
        "results": found,
        "runs": read.runs,
        "figures": read.figures,
        "series": found.series,
        "colours": charts.run_colours(read.figures, read.series),
        "baseline": found.baseline,
        "unit": found.unit,
        "selected": found.selected,
        "counter": counter,
        "counter_names": counter_names,
        "environment": _environment(batch, read.runs),
        "chart": {
            "unit": found.unit,
            "reference": found.reference,
            "series": found.scaling_chart,
            **time_charts,
            "counter": counter,
            "cdf": found.cdf,
            "histogram": found.histogram,
        },
        "rate_data": {"rate": found.rate_chart},
    }


def batch_report(request: HttpRequest, batch_id: int) -> HttpResponse:
    """The batch's report to share: one HTML file, readable offline."""
    batch = get_object_or_404(selectors.batches_with_plan(), pk=batch_id)
    html = reports.batch_report_html(batch=batch, baseline=request.GET.get("baseline"))
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{reports.report_filename(batch)}"'
    return response


def _environment(batch: Batch, runs: list[Run]) -> dict[str, Any]:
    env = BatchEnvironment.load(batch.environment)
    variables = env.server_variables
    verified = [r.verified_settings for r in runs if r.verified_settings]
    differing = set(results.differing_keys(verified))
    settings_names = sorted(
        {k for v in verified for k in v} | set(FrozenPlan.from_params(batch.params).server_settings)
    )
    return {
        "version": env.server_version,
        "load_host": env.load_host,
        "server_host": env.server_host,
        "reference": env.reference,
        "preflight": env.preflight,
        "imported": env.imported,
        "settings": [
            (name, variables.get(name, ""), [r.verified_settings.get(name, "") for r in runs],
             name in differing)
            for name in settings_names
        ],
        "variables": sorted(variables.items()),
        "differing": differing,
    }  # fmt: skip


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
            "recent": selectors.batches_counted()[:30],
            "colours": found.colours,
            "host_metrics": found.host_metrics,
        },
    )


# --- exports --------------------------------------------------------------------------------------


def export_csv(request: HttpRequest, batch_id: int) -> StreamingHttpResponse:
    """`?what=runs` (one row a run, its summary) or `?what=samples` (one row a sample)."""
    batch = get_object_or_404(Batch, pk=batch_id)
    what = "samples" if request.GET.get("what") == "samples" else "runs"
    rows = exports.batch_samples_csv(batch) if what == "samples" else exports.batch_runs_csv(batch)
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
