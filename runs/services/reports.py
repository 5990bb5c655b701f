"""What a batch answers (verdicts, summary, auto modes, the why), for the results page and
the API; and the batch's report to share: one HTML file, readable offline in any browser
without benchdash, its charts drawn by Chart.js inlined with the data."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils import timezone

from runs.analysis import answers, charts, results
from runs.analysis.results import RunFigures, Series
from runs.frozen import FrozenPlan
from runs.models import Batch, Run
from runs.services import selectors

# Inlined into the report, in this order: nothing is fetched when it is opened.
REPORT_SCRIPTS = (
    "vendor/chart.js/dist/chart.umd.js",
    "js/charts.js",
    "js/answers.js",
    "js/report.js",
)
REPORT_STYLES = ("css/benchdash.css", "css/answers.css")


@dataclass(frozen=True)
class BatchAnswers:
    figures: list[RunFigures]
    series: list[Series]
    baseline: str  # the baseline series' key
    answers: answers.BatchAnswers

    def to_dict(self) -> dict[str, Any]:
        return self.answers.to_dict(self.series)


def baseline_key(series: list[Series], index: str | int | None) -> str:
    """The series chosen as baseline by its index (the pages' ?baseline=), else the first."""
    text = str(index if index is not None else "0")
    if text.isdigit() and int(text) < len(series):
        return series[int(text)].key
    return series[0].key if series else ""


def answers_of(
    batch: Batch, runs: list[Run], figures: list[RunFigures], baseline: str
) -> answers.BatchAnswers:
    """The answers of runs already read (the results page reads them once for all)."""
    reasons = {r.pk: r.reason for r in runs if r.reason}
    return answers.batch_answers(figures, baseline, batch.params or {}, reasons)


def batch_answers(*, batch: Batch, baseline: str | int | None = None) -> BatchAnswers:
    runs = selectors.results_runs(batch)
    figures = [RunFigures.of(r) for r in runs]
    series = results.group_series(figures)
    key = baseline_key(series, baseline)
    return BatchAnswers(figures, series, key, answers_of(batch, runs, figures, key))


# --- the report to share -------------------------------------------------------------------


def batch_report_html(*, batch: Batch, baseline: str | int | None = None) -> str:
    found = batch_answers(batch=batch, baseline=baseline)
    unit = results.throughput_unit(found.figures)
    table = results.report_table(found.series, found.baseline)
    data = {
        "unit": unit,
        "series": charts.scaling_chart(found.series),
        "rate": found.answers.rate_chart,
    }
    context = {
        "batch": batch,
        "found": found.answers,
        "baseline": next((s.label for s in found.series if s.key == found.baseline), ""),
        "table": table,
        "verdicts": found.answers.verdicts,
        "unit": unit,
        "runs": found.figures,
        "environment": _environment(batch),
        "replay": json.dumps(_replay(batch), indent=2, sort_keys=True),
        "data": data,
        "answers_data": {"rate": found.answers.rate_chart},
        "scripts": [_asset(name) for name in REPORT_SCRIPTS],
        "styles": [_asset(name) for name in REPORT_STYLES],
        "made_at": timezone.now(),
    }
    return render_to_string("runs/report.html", context)


def report_filename(batch: Batch) -> str:
    return f"benchdash-batch-{batch.pk}.html"


def _asset(name: str) -> str:
    found = finders.find(name)
    if not found:
        raise FileNotFoundError(f"{name} is missing: run scripts/bootstrap (npm ci)")
    text = Path(str(found)).read_text(encoding="utf-8")
    return text.replace("</script", "<\\/script").replace("</style", "<\\/style")


def _environment(batch: Batch) -> dict[str, Any]:
    env = batch.environment or {}
    server = env.get("server") or {}
    runs = Run.objects.filter(batch=batch).order_by("position")
    verified = runs.values_list("position", "threads", "settings", "verified_settings", "reason")
    return {
        "version": server.get("version", ""),
        "variables": sorted((server.get("variables") or {}).items()),
        "load_host": sorted((env.get("load_host") or {}).items()),
        "server_host": sorted((env.get("server_host") or {}).items()),
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
