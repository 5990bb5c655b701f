"""A batch's results: the one place they are built (runs/analysis/batch_results.py does the
arithmetic), for the results page, the report (runs/services/answers/reports.py) and the API
(runs/api/answers/results.py) to render. A finished batch's are built once and stored
(runs/services/answers/stored_results.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import orjson
from django.db import connection

from runs.analysis import batch_results as pure
from runs.analysis import charts, results, run_facts
from runs.analysis.batch_results import BatchResults
from runs.analysis.results import RunFigures
from runs.analysis.series import Series, group_series, plan_order
from runs.columns import BatchEnvironment
from runs.frozen import FrozenPlan
from runs.models import Batch, Run, Target
from runs.services.answers import timeseries


@dataclass(frozen=True)
class ResultsRuns:
    """The runs a batch's results are built from, read once (the results page also draws
    their time series from them)."""

    runs: list[ResultsRun]
    figures: list[RunFigures]
    series: list[Series]


def batch_results_runs(*, batch: Batch) -> ResultsRuns:
    runs = results_runs(batch)
    figures = [RunFigures.of(r) for r in runs]
    plan = FrozenPlan.from_params(batch.params)
    order = plan_order(
        plan.server_settings, plan.option_axes, plan.targets, plan.servers, plan.tests
    )
    return ResultsRuns(runs, figures, group_series(figures, order))


def batch_results(
    *,
    batch: Batch,
    baseline: str | int | None = None,
    selected: Sequence[int] = (),
    read: ResultsRuns | None = None,
) -> BatchResults:
    """Everything a batch's results say, against the series chosen as `baseline` by its
    index (the pages' ?baseline=; the first by default), with the latency percentiles of
    the runs `selected` (by default each series' first repeat at its peak). In a bounded
    number of queries whatever the size of the batch: the runs (one, unless `read` is
    given) and the shown runs' histograms (one)."""
    read = read or batch_results_runs(batch=batch)
    key = baseline_key(read.series, baseline)
    chosen = pure.shown_runs(read.figures, read.series, selected)
    latency = pure.Latency(run_histograms(chosen), chosen)
    reasons = {r.pk: r.reason for r in read.runs if r.reason}
    return pure.build(
        read.figures, key, batch.params or {}, reasons, latency=latency, reference=_reference(batch)
    )


def baseline_key(series: list[Series], index: str | int | None) -> str:
    """The series chosen as baseline by its index (the pages' ?baseline=), else the first:
    the series are in the plan's order, so the first is the plan's first value of each
    axis (`["1", "0"]`: flush=1)."""
    return series[baseline_index(series, index)].key if series else ""


def baseline_index(series: list[Series], index: str | int | None) -> int:
    """The index asked for when there is such a series, else 0 (the first)."""
    text = str(index if index is not None else "0")
    return int(text) if text.isdigit() and int(text) < len(series) else 0


def _reference(batch: Batch) -> tuple[int | None, str]:
    return charts.reference_threads(
        batch.environment or {},
        batch.target.cpu_cores if batch.target else None,
        batch.target.disk_count if batch.target else None,
    )


def batch_time_charts(
    *, batch: Batch, read: ResultsRuns, found: BatchResults, counter: str, gauge: bool
) -> dict[str, Any]:
    """The charts drawn from samples: every run on the batch's clock, and the shown runs
    over time (with the counter asked for)."""
    colours = charts.run_colours(read.figures, read.series)
    chosen = [f for f in read.figures if f.id in found.selected]
    offsets = {f.id: charts.offset_s(f.started_at, batch.started_at) for f in read.figures}
    started = {run_id: offset for run_id, offset in offsets.items() if offset is not None}
    timeline = timeseries.timeline_series(started, buckets=charts.timeline_buckets(len(started)))
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
        "timeline": charts.timeline_chart(read.figures, timeline, colours),
    }


def batch_results_page(
    *,
    batch: Batch,
    baseline: str | int | None = None,
    selected: Sequence[int] = (),
    counter: str = "",
    read: ResultsRuns | None = None,
) -> dict[str, Any]:
    """What the results page shows below its header (templates/runs/_results_stored.html):
    the batch's results, and what only the page draws: the runs over time, with the
    counter asked for, and the environment."""
    read = read or batch_results_runs(batch=batch)
    found = batch_results(batch=batch, baseline=baseline, selected=selected, read=read)
    counter_names, gauges = charts.counter_names(read.figures)
    counter = counter if counter in counter_names else ""
    time_charts = batch_time_charts(
        batch=batch, read=read, found=found, counter=counter, gauge=counter in gauges
    )
    return {
        "batch": batch,
        "results": found,
        "runs": read.runs,
        "runs_asked": bool(selected),
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
        "rate_data": {"rate": found.rate_chart, "latency_label": found.latency_label},
    }


def _environment(batch: Batch, runs: list[ResultsRun]) -> dict[str, Any]:
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


# --- the runs, as the results read them ---------------------------------------------------


# sysbench's final report (the last without a checkpoint time), without its histogram
_FINAL_REPORT = """(SELECT r - 'histogram' FROM jsonb_array_elements("runs_run"."reports")
    WITH ORDINALITY AS e(r, i) WHERE r ->> 'checkpoint_s' IS NULL ORDER BY i DESC LIMIT 1)"""
# The raw log's lines that errors_by_code reads, picked out by PostgreSQL: the results count
# each run's errors by code without the logs leaving the database. A log without a FATAL or
# ALERT line has no error to count, and is not searched further (most logs; a quicker test).
_ERROR_LINES = """CASE WHEN strpos("runs_run"."raw_log", 'FATAL: ') > 0
    OR strpos("runs_run"."raw_log", 'ALERT: ') > 0
    THEN array_to_string(ARRAY(SELECT m[1]
        FROM regexp_matches("runs_run"."raw_log", %s, 'gn') AS m), E'\\n')
    ELSE '' END"""


class TargetName(NamedTuple):
    """A run's target as run_axes reads it (`run.target.name`)."""

    name: str


@dataclass(frozen=True, slots=True)
class ResultsRun:
    """A run as the results read it: the columns they use and what PostgreSQL picked out
    of its log, from the runs query's JSON (results_runs). Named like a Run's fields, for
    RunFigures.of, run_axes and the relative table."""

    pk: int
    position: int
    round: int
    threads: int
    cell_key: str
    target_id: int | None
    target: TargetName | None
    test: str
    install: str
    config: str
    settings: dict[str, Any]
    verified_settings: dict[str, Any]
    status: str
    summary: dict[str, Any]
    counters: dict[str, Any]
    host_summary: dict[str, Any]
    bottleneck: dict[str, Any]
    started_at: datetime | None
    finished_at: datetime | None
    error: str
    outcome: str
    reason: str
    final_report: dict[str, Any] | None
    error_lines: str | None


# The columns results_runs reads, as ResultsRun names them (their own names but the id's).
_COLUMNS = [
    "position", "round", "threads", "cell_key", "target_id", "test", "install", "config",
    "settings", "verified_settings", "status", "summary", "counters", "host_summary",
    "bottleneck", "started_at", "finished_at", "error", "outcome", "reason",
]  # fmt: skip


def results_runs(batch: Batch) -> list[ResultsRun]:
    """Every run of a batch with what the results read of it, with the final report and
    the log's error lines (`final_report`, `error_lines`) in the same query; without the
    raw log and the histograms (only the chosen runs' are drawn: run_histograms).

    The runs come as one JSON text made by PostgreSQL (their JSON columns as stored,
    their times in ISO 8601), read by `json` at once: not as Run models of 35 fields for
    the 21 read, nor as rows whose eight JSON columns are read one by one (14 -> 9 -> 7
    ms for 200 runs: issue 39)."""
    run, target = Run._meta.db_table, Target._meta.db_table
    fields = ", ".join(
        [f"'pk', \"{run}\".id"]
        + [f"'{name}', \"{run}\".\"{name}\"" for name in _COLUMNS]
        + [f"'target', \"{target}\".name", f"'final_report', {_FINAL_REPORT}",
           f"'error_lines', {_ERROR_LINES}"]
    )  # fmt: skip
    sql = (
        f'SELECT json_agg(json_build_object({fields}) ORDER BY "{run}".position)::text '  # noqa: S608
        f'FROM "{run}" LEFT JOIN "{target}" ON "{target}".id = "{run}".target_id '
        f'WHERE "{run}".batch_id = %s'
    )  # the models' names; the pattern and the batch go as parameters
    with connection.cursor() as cursor:
        cursor.execute(sql, [run_facts.ERROR_LINES_PATTERN, batch.pk])
        (text,) = cursor.fetchone() or (None,)
    runs = orjson.loads(text) if text else []
    for row in runs:
        # the target named on a servers axis (results.run_axes)
        row["target"] = TargetName(row["target"]) if row["target"] is not None else None
        for name in ("started_at", "finished_at"):
            row[name] = datetime.fromisoformat(row[name]) if row[name] else None
    return [ResultsRun(**row) for row in runs]


def run_histograms(run_ids: list[int]) -> dict[int, list[list[float]]]:
    """The latency histograms of the chosen runs (the page's runs query leaves them out)."""
    return dict(Run.objects.filter(pk__in=run_ids).values_list("pk", "histogram"))
