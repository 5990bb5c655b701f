"""A batch's results, in the order people ask: a summary in sentences, a verdict for
every cell against the baseline, the peak of each series, what the auto modes found and
why each extra run ran, the "why" of each difference, the open-loop charts (achieved and
p95 against the offered rate), the table, the percentiles and the counters of each run.
One plain structure (BatchResults) that the results page, the report and the API render
(the compare page sets batches and runs side by side with comparison.py instead).
Which series are set against which, their verdicts and the sentences are pairs.py's.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from runs.analysis import charts, run_facts
from runs.analysis.auto import rounds as auto_rounds
from runs.analysis.auto import settings as auto_settings
from runs.analysis.host_metrics import disturbed
from runs.analysis.host_metrics.host_summary import cell_host_metrics
from runs.analysis.noise import stats
from runs.analysis.noise.verdicts import Verdict
from runs.analysis.pairs import (
    axis_pairs,
    batch_verdicts,
    in_plan_order,
    offered_rates,
    pair_sentences,
    summary_sentences,
)
from runs.analysis.report_table import TableRow, report_table, table_tsv
from runs.analysis.results import SHORT_NAMES, RunFigures, throughput_unit
from runs.analysis.series import Series, group_series, plan_order, plan_wide
from runs.analysis.why import panel as why
from runs.frozen import FrozenPlan

RATE = auto_rounds.RATE


@dataclass
class BatchResults:
    """A batch's results, as plain data (primitives, lists, dicts): what the results page,
    the report and the API render, built once by runs/services/answers/results.py.
    `to_json()`/`from_json()` round-trip it, so that it can be stored once a batch is
    finished."""

    unit: str  # tps, events/s or MiB/s
    baseline: str  # the baseline series' key
    baseline_label: str
    # each series: key, label, colour, settings, options, peak (threads, value,
    # last_threads, falloff_pct) or None
    series: list[dict[str, Any]] = field(default_factory=list)
    # the verdicts in sentences; a rate plan without a search first says what it sustained
    summary: list[str] = field(default_factory=list)
    auto: list[str] = field(default_factory=list)  # what the auto modes found
    extra_runs: list[dict[str, Any]] = field(default_factory=list)  # why each extra run ran
    # repeats auto: why each cell compared with the baseline stopped (series, series_key,
    # threads, repeats, why: decided faster/slower, equivalent, reached the maximum)
    repeats_stops: list[dict[str, Any]] = field(default_factory=list)
    # each cell against the baseline: series (label), series_key, threads, and the verdict
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    # by thread count, then series: threads, series, point, ratio, verdict, is_baseline, ...
    table: list[dict[str, Any]] = field(default_factory=list)
    table_tsv: str = ""
    why: list[dict[str, Any]] = field(default_factory=list)
    rate_chart: list[dict[str, Any]] = field(default_factory=list)
    scaling_chart: list[dict[str, Any]] = field(default_factory=list)
    reference: dict[str, Any] | None = None  # cores x 2 + disks: threads, text
    selected: list[int] = field(default_factory=list)  # the runs whose percentiles show
    percentiles: list[dict[str, Any]] = field(default_factory=list)  # p50 ... p99.9 a run
    cdf: list[dict[str, Any]] = field(default_factory=list)
    histogram: list[dict[str, Any]] = field(default_factory=list)  # sysbench's buckets a run
    no_histogram: str = ""  # why the chosen runs have none
    counters: list[dict[str, Any]] = field(default_factory=list)  # derived counters a run
    # how the cells' verdicts are corrected together: `Holm's correction over 16 cells`
    correction: str = ""
    # where values of an axis beside the baseline are also set against each other
    # (pairs.axis_pairs), the first such pair named: "config=b0e0 against config=b0e1"; else ""
    paired: str = ""
    # what every run of the batch shares, said once: `max_connections=1100`
    plan_wide: list[str] = field(default_factory=list)
    # per cell: what the machines did and the bottleneck
    # (runs/analysis/host_metrics/host_summary.py)
    host_metrics: list[dict[str, Any]] = field(default_factory=list)
    # each run as sysbench's final report says it: outcome, rates, latency, fairness,
    # errors by code, counters per transaction (run_facts_rows)
    runs: list[dict[str, Any]] = field(default_factory=list)
    # how a cell's throughput is reduced over its repeats (stats.ESTIMATOR): the tables'
    # column, their "x baseline" and the verdicts all read it
    estimator: str = stats.ESTIMATOR
    latency_label: str = "p95"  # the latency percentile the plan asked for: p95, p99 ...

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BatchResults:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass(frozen=True)
class Latency:
    """The runs' latency histograms (run id -> histogram) and which runs to show."""

    histograms: Mapping[int, Sequence[Sequence[float]]]
    selected: Sequence[int]


def build(
    runs: Sequence[RunFigures],
    baseline_key: str,
    params: Mapping[str, Any],
    reasons: Mapping[int, str] | None = None,
    *,
    latency: Latency | None = None,
    reference: tuple[int | None, str] = (None, ""),
) -> BatchResults:
    """Everything a batch's results say. `reasons`: run id -> why an auto mode added it."""
    plan = FrozenPlan.from_params(params)
    order = plan_order(
        plan.server_settings, plan.option_axes, plan.targets, plan.servers, plan.tests
    )
    series = group_series(runs, order)
    offered = offered_rates(series, baseline_key)
    compared = [r for r in runs if r.series_key not in offered]
    found_verdicts = in_plan_order(
        batch_verdicts(compared, baseline_key, axis_pairs(series, baseline_key, offered)),
        series,
        baseline_key,
    )
    cell_verdicts = {o: v for (b, o), v in found_verdicts.items() if b == baseline_key}
    pairs = {p: v for p, v in found_verdicts.items() if p[0] != baseline_key}
    labels = {s.key: s.label for s in series}
    found = BatchResults(
        unit=throughput_unit(runs),
        baseline=baseline_key,
        baseline_label=labels.get(baseline_key, ""),
        series=[_series(s) for s in series],
        summary=[
            *_offered_answers(params, runs),
            *summary_sentences(series, baseline_key, cell_verdicts),
            *pair_sentences(pairs, labels),
            *disturbed.sentences(disturbed.disturbed_runs(compared), labels, baseline_key),
        ],
        auto=_auto_found(params, runs, baseline_key),
        repeats_stops=_repeats_stops(params, runs, baseline_key),
        extra_runs=_extra_runs(runs, reasons or {}),
        verdicts=_verdicts(found_verdicts, labels),
        why=[w.to_dict() for w in why.pairs(_cells(compared), labels, baseline_key)],
        rate_chart=charts.rate_chart(runs),
        scaling_chart=charts.scaling_chart(series),
        reference={"threads": reference[0], "text": reference[1]} if reference[0] else None,
        counters=[_counters(r) for r in runs],
        plan_wide=[f"{SHORT_NAMES.get(k, k)}={v}" for k, v in sorted(plan_wide(runs).items())],
        correction=next(
            (v.correction for cells in found_verdicts.values() for v in cells.values()), ""
        ),
        paired=next((f"{labels[o]} against {labels[b]}" for b, o in pairs), ""),
        host_metrics=cell_host_metrics(runs),
        runs=run_facts_rows(runs, series),
        latency_label=latency_label(runs, plan.options),
    )
    table = report_table(series, baseline_key)
    found.table = [_row(row, cell_verdicts) for row in table]
    found.table_tsv = table_tsv(table, found.unit, found.latency_label)
    if latency is not None:
        _add_latency(found, runs, series, latency)
    return found


def latency_label(runs: Sequence[RunFigures], options: Mapping[str, Any]) -> str:
    """`p99`: the percentile the runs measured (sysbench's --percentile), else the plan's,
    else sysbench's default, 95."""
    measured = [pct for r in runs if (pct := r.figures.latency_pct) is not None]
    pct = measured[0] if measured else options.get("percentile", 95)
    try:
        return f"p{float(pct):g}"
    except (TypeError, ValueError):
        return "p95"


def _auto_found(params: Mapping[str, Any], runs: Sequence[RunFigures], baseline: str) -> list[str]:
    settings = auto_settings.auto_from_dict(FrozenPlan.from_params(params).auto)
    return auto_rounds.conclusions(settings, runs, baseline) if settings.any else []


def _offered_answers(params: Mapping[str, Any], runs: Sequence[RunFigures]) -> list[str]:
    """A `rate` axis without the rate search: "sustainable up to ..." of the offered rates
    (the search says it itself, in `auto`); a fixed `rate` option: held or not held."""
    plan = FrozenPlan.from_params(params)
    if auto_settings.auto_from_dict(plan.auto).rate is not None:
        return []
    offered = auto_rounds.offered_rates(runs)
    fixed = str(plan.options.get(RATE, ""))
    if offered or not fixed.isdigit() or int(fixed) <= 0:
        return offered
    return auto_rounds.fixed_rate(runs, int(fixed))  # a fixed rate gets its verdict too


def _repeats_stops(
    params: Mapping[str, Any], runs: Sequence[RunFigures], baseline: str
) -> list[dict[str, Any]]:
    settings = auto_settings.auto_from_dict(FrozenPlan.from_params(params).auto)
    if settings.repeats is None:
        return []
    return auto_rounds.repeats_stops(settings.repeats, runs, baseline)


def _extra_runs(runs: Sequence[RunFigures], reasons: Mapping[int, str]) -> list[dict[str, Any]]:
    return [
        {"position": r.position, "label": r.label, "status": r.status, "reason": reasons[r.id]}
        for r in runs
        if reasons.get(r.id)
    ]


def _verdicts(
    found: Mapping[tuple[str, str], Mapping[int, Verdict]], labels: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Each cell against the baseline's, then each pair beside it: `series` is the cell's,
    `against` the one it is set against, `name` both ("config=b0e0 against config=b0e1")."""
    return [
        {
            "series": labels.get(key, key),
            "series_key": key,
            "against": labels.get(base, base),
            "against_key": base,
            "name": f"{labels.get(key, key)} against {labels.get(base, base)}",
            "threads": threads,
            **v.to_dict(),
        }
        for (base, key), by_threads in found.items()
        for threads, v in sorted(by_threads.items())
    ]


def _series(s: Series) -> dict[str, Any]:
    # one thread count (a one-thread plan, each offered rate of a rate plan): no curve, so
    # no "peaks at" and no "still rising"
    single = len(s.points) == 1
    peak = None if single else s.peak
    return {
        "key": s.key,
        "label": s.label,
        "colour": s.colour,
        "settings": dict(s.settings),
        "options": dict(s.options),
        "axes": dict(s.axes),  # its test, install and config, where the plan varies them
        "peak": None
        if peak is None
        else {
            "threads": peak.threads,
            "value": peak.value,
            "last_threads": peak.last_threads,
            "falloff_pct": peak.falloff_pct,
        },
        "single_threads": s.points[0].threads if single else None,
    }


def _row(row: TableRow, cell_verdicts: Mapping[str, Mapping[int, Verdict]]) -> dict[str, Any]:
    p = row.point
    verdict = (cell_verdicts.get(row.series.key) or {}).get(row.threads)
    return {
        "threads": row.threads,
        "series": {"key": row.series.key, "label": row.series.label, "colour": row.series.colour},
        "point": {
            "mean": p.mean, "median": p.median, "low": p.low, "high": p.high, "n": p.n,
            "qps": p.qps,
            "latency_ms": p.latency_ms, "errors": p.errors, "failed": p.failed,
            "forced_shutdowns": p.forced_shutdowns, "unfinished": p.unfinished,
        },
        "ratio": row.ratio,
        "verdict": verdict.to_dict() if verdict else None,
        "is_baseline": row.is_baseline,
        "first_of_threads": row.first_of_threads,
        "rows_for_threads": row.rows_for_threads,
    }  # fmt: skip


def _counters(run: RunFigures) -> dict[str, Any]:
    return {
        "position": run.position,
        "label": run.label,
        "status": run.status,
        "derived": run.server_counters.derived,
        "missing": run.server_counters.missing,
    }


def run_facts_rows(runs: Sequence[RunFigures], series: Sequence[Series]) -> list[dict[str, Any]]:
    """Each run as the run page says it (runs/analysis/run_facts.py), from its final report
    and its log's error lines: the outcome (a forced shutdown with its unfinished
    transactions), errors by code, rates with the read/write/other split, latency,
    errors and reconnects per second, thread fairness, server counters per transaction."""
    colours = {s.key: s.colour for s in series}
    return [_run_facts(run, colours.get(run.series_key, "")) for run in runs]


def _run_facts(run: RunFigures, colour: str) -> dict[str, Any]:
    report = run.final_report
    facts = run_facts.run_facts(
        outcome=run.outcome,
        reports=[report] if report else [],
        histogram=[],
        counters=run.server_counters,  # read once a run (the why panel reads them too)
        raw_log=run.error_lines,
    )
    sql, general = report.get("sql") or {}, report.get("general") or {}
    return {
        "id": run.id, "position": run.position, "label": run.label, "colour": colour,
        "threads": run.threads, "status": run.status, "outcome": run.outcome,
        "outcome_text": facts.outcome_text if run.outcome else "",
        "unfinished_transactions": facts.unfinished_transactions, "error": run.error,
        "errors": [asdict(e) for e in facts.errors],
        "tps": sql.get("tps"), "qps": sql.get("qps"), "events_per_s": general.get("events_per_s"),
        "queries": facts.queries,  # read, write, other, total: counts
        "latency": facts.latency,  # min, avg, max, percentile, percentile_value (ms)
        "errors_per_s": sql.get("ignored_errors_per_s"),
        "reconnects_per_s": sql.get("reconnects_per_s"),
        "fairness": facts.fairness,  # events_avg/_stddev, exec_time_avg/_stddev (s)
        "per_transaction": [[name, value] for name, value in facts.per_transaction],
    }  # fmt: skip


def shown_runs(
    runs: Sequence[RunFigures], series: Sequence[Series], selected: Sequence[int]
) -> list[int]:
    """The runs asked for that exist (up to the most a chart shows), else the default:
    each series' first repeat at its peak."""
    known = {r.id for r in runs}
    chosen = [i for i in selected if i in known][: charts.MAX_SELECTED_RUNS]
    return chosen or charts.default_selection(series)


def _add_latency(
    found: BatchResults, runs: Sequence[RunFigures], series: Sequence[Series], latency: Latency
) -> None:
    """The percentiles, CDF and histogram of the runs chosen (by default each series'
    first repeat at its peak)."""
    found.selected = shown_runs(runs, series, latency.selected)
    colours = charts.run_colours(runs, series)
    picked = [r for r in runs if r.id in found.selected]
    rows, found.cdf = charts.latency_chart(picked, latency.histograms, colours)
    found.histogram = charts.latency_histograms(picked, latency.histograms, colours)
    if not found.histogram:
        found.no_histogram = charts.no_histogram_reason(picked)
    found.percentiles = [{**row, "colour": colours.get(row["run"], "")} for row in rows]


def _cells(runs: Sequence[RunFigures]) -> dict[str, dict[int, list[RunFigures]]]:
    cells: dict[str, dict[int, list[RunFigures]]] = {}
    for run in runs:
        cells.setdefault(run.series_key, {}).setdefault(run.threads, []).append(run)
    return cells
