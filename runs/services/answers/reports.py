"""A batch's report to share: its results (runs/services/answers/results.py) rendered as one HTML
file, readable offline in any browser without benchdash, its charts drawn by Chart.js
inlined with the data. The same tables and charts as the results page (scaling, rate,
the runs over time as the page shows them by default, the batch timeline, the latency CDF
and histogram, what the machines did); its links to
run pages and logs are absolute (runs/services/links.py), its tables shown whole."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils import timezone

from runs.analysis.batch_results import BatchResults
from runs.columns import BatchEnvironment
from runs.frozen import FrozenPlan
from runs.models import Batch, Run
from runs.services.answers import relative, results, stored_results, tpcc
from runs.services.links import base_url

# Inlined into the report: nothing is fetched when it is opened. Chart.js as its classic
# build, a global `Chart` (its ES build imports its chunks by relative URL, which a module
# inlined as a data: URL cannot resolve); the page modules as data: URLs in an import map,
# under the names they import each other by (templates/base.html maps the same names).
REPORT_CHART_JS = "vendor/chart.js/dist/chart.umd.js"
REPORT_MODULES = ("charts.js", "batch_results_rate.js", "report.js")
# Chart.js by its npm names ("chart.js/auto", as charts.js imports it: everything registered)
# is, in the report, the classic build's global: the same thing.
CHART_JS_FROM_GLOBAL = "const Chart = globalThis.Chart; export { Chart, Chart as default };"
REPORT_STYLES = ("css/benchdash.css", "css/batch_results.css")


def batch_report_html(
    *, batch: Batch, baseline: str | int | None = None, found: BatchResults | None = None
) -> str:
    """The report of `found` (the batch's results against `baseline` unless given: as
    stored once the batch is finished, runs/services/answers/stored_results.py)."""
    found = found or stored_results.batch_stored(batch=batch, baseline=baseline).value
    read = results.batch_results_runs(batch=batch)
    time_charts = results.batch_time_charts(
        batch=batch, read=read, found=found, counter="", gauge=False
    )
    context = {
        "batch": batch,
        "results": found,
        "relative": relative.batch_relative(batch=batch),
        "tpcc": tpcc.batch_tpcc(batch),
        "environment": _environment(batch),
        "replay": json.dumps(_replay(batch), indent=2, sort_keys=True),
        # Every chart of the results page, the runs over time as it shows them by default.
        "data": {
            "unit": found.unit,
            "series": found.scaling_chart,
            "rate": found.rate_chart,
            "timeseries": time_charts["timeseries"],
            "timeline": time_charts["timeline"],
            "cdf": found.cdf,
            "histogram": found.histogram,
            "latency_label": found.latency_label,
        },
        # Its links lead to benchdash itself, wherever the file is opened.
        "link_base": base_url(),
        "rate_data": {"rate": found.rate_chart, "latency_label": found.latency_label},
        "chart_js": _inlined(REPORT_CHART_JS),
        "import_map": _import_map(),
        "styles": [_inlined(name) for name in REPORT_STYLES],
        "made_at": timezone.now(),
    }
    return render_to_string("runs/report.html", context)


def report_filename(batch: Batch) -> str:
    return f"benchdash-batch-{batch.pk}.html"


def _asset(name: str) -> str:
    found = finders.find(name)
    if not found:
        raise FileNotFoundError(f"{name} is missing: run scripts/bootstrap (npm ci)")
    return Path(str(found)).read_text(encoding="utf-8")


def _inlined(name: str) -> str:
    """The text of a static file, safe inside a <script> or <style> element."""
    return _asset(name).replace("</script", "<\\/script").replace("</style", "<\\/style")


def _import_map() -> str:
    chart_js = _data_url(CHART_JS_FROM_GLOBAL)
    imports = {"chart.js": chart_js, "chart.js/auto": chart_js}
    imports |= {f"benchdash/{name}": _data_url(_asset(f"js/{name}")) for name in REPORT_MODULES}
    return json.dumps({"imports": imports}, indent=1)


def _data_url(module: str) -> str:
    # base64: no character of it can end the <script> element the map is written in
    return "data:text/javascript;base64," + base64.b64encode(module.encode()).decode("ascii")


def _environment(batch: Batch) -> dict[str, Any]:
    env = BatchEnvironment.load(batch.environment)
    runs = Run.objects.filter(batch=batch).order_by("position")
    verified = runs.values_list("position", "threads", "settings", "verified_settings", "reason")
    return {
        "version": env.server_version,
        "variables": sorted(env.server_variables.items()),
        "load_host": sorted(env.load_host.items()),
        "server_host": sorted(env.server_host.items()),
        "verified": [
            {"position": p + 1, "threads": t, "settings": s, "verified": v, "reason": r}
            for p, t, s, v, r in verified
        ],
    }


def _replay(batch: Batch) -> dict[str, Any]:
    """The plan to run the same again, as POST /api/v1/plans takes it (the target and
    load host by the names they had)."""
    plan = FrozenPlan.from_params(batch.params)
    replay = {
        "name": f"re-run of batch {batch.pk}",
        "test": plan.test,
        "options": plan.options,
        "threads": plan.threads,
        "server_settings": plan.server_settings,
        "option_axes": plan.option_axes,
        "repeats": plan.repeats,
        "auto": plan.auto,
        "warmup_s": plan.warmup_s,
        "order_policy": plan.order_policy,
        "dataset_policy": plan.dataset_policy,
        "cleanup": plan.cleanup,
        "seed": batch.seed,
        "target": plan.target_name,
        "load_host": plan.load_host,
    }
    if plan.script:
        replay["script"] = plan.script.name
    return replay
