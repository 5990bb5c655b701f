"""Whether a nightly batch got slower than the nights before it, cell by cell: the rule.

A cell's figure for a night is the median over its repeats. Two things are said of it:

- the band: against the median of the same cell's figures over the previous successful
  nights, with the noise of those nights (1.4826 x MAD, so one wild night cannot inflate
  it); a figure worse than both the plan's threshold and three times the noise is one
  night off (OUTLIER): shown, never alerted on its own;
- the steps: the change points of the cell's series, tonight included
  (runs/analysis/nightly/change_points.py). The alert is a NEW step in the slower direction whose
  size (relative to the level before it) is at least the plan's threshold: a step at
  tonight's night, or one the previous check had not seen. A cell alerted is a
  REGRESSION: nobody is woken for noise. Improvements are reported, never alerted.

runs/analysis/nightly/check.py applies the rule night by night.

A cell is the same cell from night to night only when everything that shapes its figures
is identical: test, sysbench options (threads included), server settings, target server
and custom script. A plan edited between two nights starts a new history for the cells it
changed.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from runs.analysis.nightly import change_points
from runs.analysis.noise import stats
from runs.analysis.percent import signed_pct
from runs.analysis.results import (
    TARGET,
    axis_options,
    cell_axes,
    series_label,
    target_on_axis,
    throughput,
)
from runs.columns import RunSummary

MIN_NIGHTS = 5  # fewer nights than this say little about the noise: no verdict
NOISE_SIGMAS = 3.0
STEP_NIGHTS = 60  # the nights whose series the steps are looked for in, tonight included

REGRESSION = "regression"
IMPROVEMENT = "improvement"
STEADY = "within noise"
OUTLIER = "one night off"  # beyond the band, but no new step: shown, not alerted
NOT_ENOUGH = "not enough history"
NO_FIGURE = "no figure"

# The multiplication sign of print ("3 x noise" with U+00D7), escaped because the linter
# flags look-alike characters in the source.
TIMES = "\u00d7"

# The target's fields that say which server was measured (not its name, which may change).
_TARGET_IDENTITY = ("engine", "host", "port", "socket", "database")


@dataclass(frozen=True)
class Metric:
    key: str  # "throughput" or "latency"
    higher_is_better: bool


THROUGHPUT = Metric("throughput", higher_is_better=True)
LATENCY = Metric("latency", higher_is_better=False)


# --- what a night measured -------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    """The fields of a Run that a regression check reads."""

    cell_key: str
    threads: int
    settings: Mapping[str, Any]
    options: Mapping[str, Any]
    status: str
    summary: Mapping[str, Any]
    # A servers axis: the run's own target (its describe()); None: the plan's target.
    target: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class CellNight:
    """One cell on one night: its repeats reduced to their medians."""

    identity: str
    label: str
    threads: int
    settings: dict[str, str]
    axis_options: dict[str, str]
    repeats: int  # successful runs with a throughput figure
    throughput: float | None
    throughput_unit: str  # tps, events/s or MiB/s
    latency_ms: float | None
    latency_pct: float | None  # the percentile of latency_ms, e.g. 95

    def value(self, metric: Metric) -> float | None:
        return self.throughput if metric is THROUGHPUT else self.latency_ms

    def metric_name(self, metric: Metric) -> str:
        if metric is THROUGHPUT:
            return self.throughput_unit
        return f"p{self.latency_pct:g}" if self.latency_pct is not None else "latency"


def cell_identity(
    *,
    test: str,
    options: Mapping[str, Any],
    settings: Mapping[str, Any],
    threads: int,
    target: Mapping[str, Any] | None,
    script: str | None,
) -> str:
    """A short fingerprint of everything that shapes a cell's figures. The threads count
    among the options too, as runs stored them before Run.threads was their one record:
    the nights stored since keep their cells' identities."""
    frozen = {
        "test": test,
        "options": {str(k): str(v) for k, v in {**options, "threads": threads}.items()},
        "settings": {str(k): str(v) for k, v in settings.items()},
        "threads": threads,
        "target": {k: (target or {}).get(k) for k in _TARGET_IDENTITY} if target else None,
        "script": hashlib.sha256(script.encode()).hexdigest() if script else None,
    }
    canonical = json.dumps(frozen, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def night_cells(
    runs: Iterable[RunResult],
    *,
    test: str,
    target: Mapping[str, Any] | None,
    script: str | None,
    ok_status: str = "done",
) -> dict[str, CellNight]:
    """A night's cells by identity, each the median of its successful repeats."""
    grouped: dict[str, list[RunResult]] = {}
    for run in runs:
        identity = cell_identity(
            test=test,
            options=run.options,
            settings=run.settings,
            threads=run.threads,
            target=run.target if run.target is not None else target,  # per (target, cell)
            script=script,
        )
        grouped.setdefault(identity, []).append(run)
    return {
        identity: _cell_night(identity, group, ok_status) for identity, group in grouped.items()
    }


def _cell_night(identity: str, runs: list[RunResult], ok_status: str) -> CellNight:
    first = runs[0]
    ok = [r for r in runs if r.status == ok_status]
    rates = [throughput(r.summary) for r in ok]
    values = [v for v, _ in rates if v is not None]
    figures = [RunSummary.load(r.summary) for r in ok]
    latencies = [v for f in figures if (v := f.latency_pct_ms) is not None]
    pct = next((f.latency_pct for f in figures if f.latency_pct), None)
    axes = axis_options(first.cell_key)
    if first.target is not None and target_on_axis(first.cell_key):
        axes[TARGET] = str(first.target.get("name", ""))
    settings = {str(k): str(v) for k, v in first.settings.items()}
    label = f"threads={first.threads}"
    varied = cell_axes(first.cell_key)  # its test, install, config where the plan varies them
    if settings or axes or varied:
        label += f" {series_label(settings, axes, varied)}"
    return CellNight(
        identity=identity,
        label=label,
        threads=first.threads,
        settings=settings,
        axis_options=axes,
        repeats=len(values),
        throughput=statistics.median(values) if values else None,
        throughput_unit=next((u for v, u in rates if v is not None), "tps"),
        latency_ms=statistics.median(latencies) if latencies else None,
        latency_pct=pct,
    )


# --- the verdict -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One figure of one cell against its baseline, with the rule's numbers."""

    metric: str  # "throughput" or "latency"
    name: str  # tps, events/s, p95 ...
    unit: str  # "" for rates, "ms" for latency
    verdict: str
    value: float | None
    baseline: float | None = None
    change_pct: float | None = None
    noise_pct: float | None = None
    threshold_pct: float | None = None  # the plan's
    limit_pct: float | None = None  # max(threshold, 3 x noise): what a change must exceed
    nights: int = 0  # nights the baseline is made of
    text: str = ""  # "tps 8,210 vs baseline 10,050 (-18 %), noise ±2.1 %"
    rule: str = ""  # "regression beyond 6.3 % = max(5 %, 3 x noise ±2.1 %), over 7 nights"

    @property
    def flagged(self) -> bool:
        return self.verdict == REGRESSION


def judge(
    metric: Metric,
    *,
    name: str,
    value: float | None,
    history: Sequence[float],
    threshold_pct: float,
) -> Check:
    """The verdict on `value` against the nights in `history` (the baseline window)."""
    unit = "ms" if metric is LATENCY else ""
    nights = len(history)
    blank = Check(metric=metric.key, name=name, unit=unit, verdict=NO_FIGURE, value=value)
    if value is None:
        return replace(blank, nights=nights, text=f"{name}: no figure")
    if nights < MIN_NIGHTS:
        text = f"{NOT_ENOUGH}: {nights} of {MIN_NIGHTS} nights"
        return replace(blank, verdict=NOT_ENOUGH, nights=nights, text=text)
    baseline = statistics.median(history)
    if baseline <= 0:
        text = f"{name} {figure(value, unit)}: the baseline is 0, no percentage to compare"
        return replace(blank, baseline=baseline, nights=nights, text=text)
    noise_pct = stats.robust_noise(history) / baseline * 100
    limit = max(threshold_pct, NOISE_SIGMAS * noise_pct)
    change = (value - baseline) / baseline * 100
    worse = -change if metric.higher_is_better else change
    verdict = REGRESSION if worse > limit else IMPROVEMENT if worse < -limit else STEADY
    return replace(
        blank,
        verdict=verdict,
        baseline=baseline,
        change_pct=change,
        noise_pct=noise_pct,
        threshold_pct=threshold_pct,
        limit_pct=limit,
        nights=nights,
        text=(
            f"{name} {figure(value, unit)} vs baseline {figure(baseline, unit)} "
            f"({signed_pct(change)}), noise ±{noise_pct:.1f} %"
        ),
        rule=(
            f"{verdict} beyond {limit:.1f} % = max({threshold_pct:g} %, "
            f"{NOISE_SIGMAS:g} {TIMES} noise ±{noise_pct:.1f} %), over {nights} nights"
        ),
    )


@dataclass(frozen=True)
class CellCheck:
    identity: str
    label: str
    threads: int
    settings: dict[str, str]
    axis_options: dict[str, str]
    repeats: int
    checks: list[Check]
    steps: list[dict[str, Any]] = field(default_factory=list)  # see _step

    @property
    def verdict(self) -> str:
        if self.flagged:
            return REGRESSION
        verdicts = [OUTLIER if c.verdict == REGRESSION else c.verdict for c in self.checks]
        for verdict in (IMPROVEMENT, OUTLIER, STEADY, NOT_ENOUGH):
            if verdict in verdicts:
                return verdict
        return NO_FIGURE

    @property
    def flagged(self) -> bool:
        """Alerted: a new step, slower, at least the plan's threshold."""
        return any(s["alert"] for s in self.steps)

    @property
    def flags(self) -> list[str]:
        """What an alerted cell says: its new slower steps, and tonight against the band."""
        if not self.flagged:
            return []
        band = [c.text for c in self.checks if c.verdict == REGRESSION]
        return band + [s["text"] for s in self.steps if s["alert"]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "label": self.label,
            "threads": self.threads,
            "settings": self.settings,
            "options": self.axis_options,
            "repeats": self.repeats,
            "verdict": self.verdict,
            "flagged": self.flagged,
            "checks": [asdict(c) for c in self.checks],
            "steps": self.steps,
        }


@dataclass(frozen=True)
class Analysis:
    threshold_pct: float
    window: int  # how many previous nights make a baseline
    cells: list[CellCheck] = field(default_factory=list)

    @property
    def flagged(self) -> list[CellCheck]:
        return [c for c in self.cells if c.flagged]

    @property
    def status(self) -> str:
        verdicts = {c.verdict for c in self.cells}
        if not self.cells:
            return NO_FIGURE
        if REGRESSION in verdicts:
            return REGRESSION
        if verdicts <= {NOT_ENOUGH, NO_FIGURE}:
            return NOT_ENOUGH if NOT_ENOUGH in verdicts else NO_FIGURE
        for verdict in (IMPROVEMENT, OUTLIER):
            if verdict in verdicts:
                return verdict
        return STEADY

    @property
    def summary(self) -> str:
        """One line for people: what the night says."""
        flagged, total = len(self.flagged), len(self.cells)
        if self.status == REGRESSION:
            return f"{flagged} of {total} cells regressed beyond the noise"
        if self.status == NOT_ENOUGH:
            nights = min((c.nights for cell in self.cells for c in cell.checks), default=0)
            return f"{NOT_ENOUGH}: {nights} of {MIN_NIGHTS} nights needed to judge"
        if self.status == IMPROVEMENT:
            better = sum(c.verdict == IMPROVEMENT for c in self.cells)
            return f"{better} of {total} cells improved beyond the noise; none regressed"
        if self.status == OUTLIER:
            off = sum(c.verdict == OUTLIER for c in self.cells)
            return f"{off} of {total} cells one night off the band, with no new step: no alert"
        if self.status == STEADY:
            return f"all {total} cells within the noise"
        return "no figure to judge"

    @property
    def rule(self) -> str:
        return (
            f"an alert is a new step (change point) in the slower direction of at least "
            f"{self.threshold_pct:g} %, found by E-divisive at p < {change_points.MAX_PVALUE:g} "
            f"over the last {STEP_NIGHTS} successful nights (at least {MIN_NIGHTS} before "
            f"tonight); new = at tonight's night or not seen by the previous check. "
            f"The band: a change worse than max({self.threshold_pct:g} %, "
            f"{NOISE_SIGMAS:g} {TIMES} noise) against the median of the previous "
            f"{self.window} successful nights; noise = {stats.MAD_TO_SIGMA} {TIMES} MAD of "
            f"those nights; beyond it without a new step is {OUTLIER}, not alerted"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "summary": self.summary,
            "rule": {
                "text": self.rule,
                "threshold_pct": self.threshold_pct,
                "noise_sigmas": NOISE_SIGMAS,
                "window": self.window,
                "min_nights": MIN_NIGHTS,
                "step_nights": STEP_NIGHTS,
                "step_max_pvalue": change_points.MAX_PVALUE,
                "step_min_pct": change_points.MIN_MAGNITUDE * 100,
            },
            "flagged": [c.label for c in self.flagged],
            "cells": [c.to_dict() for c in self.cells],
        }


# --- numbers as people read them -------------------------------------------------------------


def figure(value: float, unit: str = "") -> str:
    """8,210 · 194.6 · 3.45 ms"""
    size = abs(value)
    text = f"{value:,.0f}" if size >= 1000 else f"{value:.1f}" if size >= 10 else f"{value:.2f}"
    return f"{text} {unit}" if unit else text
