"""The answer pages: a batch's results, comparisons, and exports. Every view keeps its
state in the query string, so its URL can be shared."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render

from runs.analysis import answers, charts, comparison, results
from runs.frozen import FrozenPlan
from runs.models import Batch, Run
from runs.services import exports, reports, selectors, timeseries
from runs.web.responses import streamed


def _ids(text: str) -> list[int]:
    return [int(p) for p in text.replace(",", " ").split() if p.isdigit()][:200]


def batch_results(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_object_or_404(selectors.batches_with_plan(), pk=batch_id)
    return render(request, "runs/batch_results.html", results_context(request, batch))


def results_context(request: HttpRequest, batch: Batch) -> dict[str, Any]:
    """Everything the results page shows, in a bounded number of queries and chart points
    whatever the size of the batch: the runs (one query), the timeline and the chosen
    runs' series bucketed in the database (two), their histograms (one), and the counter
    asked for (one)."""
    runs = selectors.results_runs(batch)
    figures = [results.RunFigures.of(r) for r in runs]
    series = results.group_series(figures)
    colours = charts.run_colours(figures, series)
    baseline = _baseline(request, series)
    selected = _selected(request, figures, series)
    chosen = [f for f in figures if f.id in selected]
    counter_names, gauges = charts.counter_names(figures)
    counter = request.GET.get("counter", "")
    counter = counter if counter in counter_names else ""
    reference, reference_text = results.reference_threads(
        batch.environment or {},
        batch.target.cpu_cores if batch.target else None,
        batch.target.disk_count if batch.target else None,
    )
    latency_rows, cdf = charts.latency_chart(chosen, selectors.run_histograms(selected), colours)
    unit = results.throughput_unit(figures)
    table = results.report_table(series, baseline)
    chart = {
        "unit": unit,
        "reference": {"threads": reference, "text": reference_text} if reference else None,
        "series": charts.scaling_chart(series),
        **_time_charts(batch, figures, chosen, colours, counter, gauge=counter in gauges),
        "counter": counter,
        "cdf": cdf,
    }
    verified = [r.verified_settings for r in runs if r.verified_settings]
    found = reports.answers_of(batch, runs, figures, baseline)
    return {
        **_answers_context(found, series, baseline),
        "batch": batch,
        "runs": runs,
        "figures": figures,
        "series": series,
        "colours": colours,
        "baseline": baseline,
        "table": table,
        "table_tsv": results.table_tsv(table, unit),
        "unit": unit,
        "selected": selected,
        "counter": counter,
        "counter_names": counter_names,
        "latency_rows": latency_rows,
        "reference": reference,
        "reference_text": reference_text,
        "differing": results.differing_keys(verified),
        "environment": _environment(batch, runs),
        "chart": chart,
    }


def _answers_context(
    found: answers.BatchAnswers, series: list[results.Series], baseline: str
) -> dict[str, Any]:
    """The page's answers: summary, verdicts, why, extra runs and the open-loop charts."""
    return {
        "found": found,
        "verdicts": found.verdicts,
        "baseline_label": next((s.label for s in series if s.key == baseline), ""),
        "answers_data": {"rate": found.rate_chart},
    }


def batch_report(request: HttpRequest, batch_id: int) -> HttpResponse:
    """The batch's report to share: one HTML file, readable offline."""
    batch = get_object_or_404(selectors.batches_with_plan(), pk=batch_id)
    html = reports.batch_report_html(batch=batch, baseline=request.GET.get("baseline"))
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{reports.report_filename(batch)}"'
    return response


def _time_charts(
    batch: Batch,
    figures: list[results.RunFigures],
    chosen: list[results.RunFigures],
    colours: dict[int, str],
    counter: str,
    *,
    gauge: bool,
) -> dict[str, Any]:
    """The charts drawn from samples: every run on the batch's clock, and the chosen runs
    over time (with the counter asked for)."""
    started = [f.id for f in figures if f.started_at is not None]
    timeline = timeseries.sample_series(
        started, buckets=charts.timeline_buckets(len(started)), metrics=("tps",)
    )
    chosen_ids = [f.id for f in chosen]
    lines = timeseries.sample_series(chosen_ids, buckets=charts.SERIES_BUCKETS)
    counters = (
        timeseries.counter_series(chosen_ids, counter, gauge=gauge, buckets=charts.SERIES_BUCKETS)
        if counter
        else None
    )
    warmup_s = float(FrozenPlan.from_params(batch.params).warmup_s or 0)
    return {
        "timeseries": charts.timeseries_chart(
            chosen, lines, colours, warmup_s=warmup_s, counters=counters
        ),
        "timeline": charts.timeline_chart(figures, timeline, colours, batch.started_at),
    }


def _baseline(request: HttpRequest, series: list[results.Series]) -> str:
    index = request.GET.get("baseline", "0")
    if index.isdigit() and int(index) < len(series):
        return series[int(index)].key
    return series[0].key if series else ""


def _selected(
    request: HttpRequest, figures: list[results.RunFigures], series: list[results.Series]
) -> list[int]:
    known = {f.id for f in figures}
    chosen = [i for i in _ids(",".join(request.GET.getlist("runs"))) if i in known]
    return chosen[: charts.MAX_SELECTED_RUNS] or charts.default_selection(series)


def _environment(batch: Batch, runs: list[Run]) -> dict[str, Any]:
    env = batch.environment or {}
    server = env.get("server") or {}
    variables: dict[str, str] = server.get("variables") or {}
    verified = [r.verified_settings for r in runs if r.verified_settings]
    differing = set(results.differing_keys(verified))
    settings_names = sorted(
        {k for v in verified for k in v} | set(FrozenPlan.from_params(batch.params).server_settings)
    )
    return {
        "version": server.get("version", ""),
        "load_host": env.get("load_host") or {},
        "server_host": env.get("server_host") or {},
        "reference": env.get("reference") or {},
        "preflight": env.get("preflight") or {},
        "imported": env.get("imported") or {},
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
    keys = list(dict.fromkeys(k for k in given if k[:1] in ("b", "r") and k[1:].isdigit()))[:8]
    found = selectors.compare_sides(keys)
    sides = [found[k] for k in keys if k in found]
    pairs = [(side, comparison.compare_sides(sides[0], side)) for side in sides[1:]]
    chart = []
    for index, side in enumerate(sides):
        colour = results.PALETTE[index % len(results.PALETTE)]
        for s in charts.scaling_chart(results.group_series(side.runs)):
            s["label"] = f"{side.key} · {s['label']}"
            s["colour"] = colour
            chart.append(s)
    return render(
        request,
        "runs/compare.html",
        {
            "sides": sides,
            "pairs": pairs,
            "keys": keys,
            "chart": {"series": chart, "unit": "tps", "reference": None},
            "recent": selectors.batches_counted()[:30],
            "colours": [results.PALETTE[i % len(results.PALETTE)] for i in range(len(sides))],
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
