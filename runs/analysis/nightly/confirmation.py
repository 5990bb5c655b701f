"""Whether a confirmation re-run agrees with the step a nightly check alerted on.

A night alerted (a new slower step, runs/analysis/nightly/check.py) is either a real step or one
wild night: E-divisive cannot tell them apart while the step has one night after it. The
flagged cells are run again at once (a batch launched to confirm) and each alerted step is
judged by where the re-run's figure lands:

- the step says the cell's level moved from `before` (the mean of the nights since the
  previous step) to `after`; a wild night says it is still `before`;
- the re-run's figure is the median of its repeats (repeats auto adds repeats until the
  95 % interval of their mean is within a quarter of the step, so that the figure's own
  noise cannot carry it across the midpoint);
- with the same noise either way, the likelihood of the two answers is equal at the
  midpoint between the two levels: the step is CONFIRMED when the re-run is on the slower
  side of it, NOISE otherwise. Both errors are then equally likely, and on 1.5 % noise
  (docs/nightly.md) a 5 % step's re-run falls on the wrong side less than once in 20.

The re-run is not tested against the baseline nights by Welch's test: its repeats share
one evening and vary less than nights do, so a t-test mixing the two would call almost
any difference significant. The figures of the baseline nights are already in the step's
`before`.

A cell is confirmed when any of its alerted steps is; the alert when any cell is. Pure:
no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scipy import stats as scipy_stats

from runs.analysis.nightly.regressions import figure
from runs.analysis.percent import signed_pct

CONFIRMED = "confirmed"
NOISE = "noise"
NO_FIGURE = "no figure"  # the re-run measured nothing for this cell

# Repeats auto for a confirmation: at least 3 repeats, more (up to MAX_REPEATS) while the
# 95 % interval of the mean is wider than a quarter of the step.
MIN_REPEATS = 3
MAX_REPEATS = 5
PRECISION_OF_STEP = 0.25
MIN_TARGET_PCT = 0.5


def target_pct(steps: Sequence[Mapping[str, Any]]) -> float:
    """The half-width of the interval repeats auto aims at: a quarter of the smallest
    alerted step, in percent of its level."""
    sizes = [abs(float(s["change_pct"])) for s in steps if s.get("change_pct") is not None]
    return max(MIN_TARGET_PCT, round(min(sizes, default=4.0) * PRECISION_OF_STEP, 2))


def watched_metric(steps: Sequence[Mapping[str, Any]]) -> str:
    """The metric repeats auto watches on the re-run: that of the smallest alerted step,
    whose quarter is the target (a night alerted on its p95 is re-run until the p95 is
    clear, not the throughput)."""
    sized = [s for s in steps if s.get("change_pct") is not None]
    if not sized:
        return "throughput"
    smallest = min(sized, key=lambda s: abs(float(s["change_pct"])))
    return "latency" if smallest.get("metric") == "latency" else "throughput"


@dataclass(frozen=True)
class StepConfirmation:
    """One alerted step of one cell, and what the re-run said of it."""

    metric: str  # throughput or latency
    name: str  # tps, p95 ...
    verdict: str
    before: float
    after: float
    midpoint: float
    value: float | None  # the re-run's figure: the median of its repeats
    low: float | None  # the 95 % interval of the re-run's mean
    high: float | None
    repeats: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def confirm_step(step: Mapping[str, Any], values: Sequence[float]) -> StepConfirmation:
    """The re-run's figures of one metric (`values`, one per repeat) against an alerted
    step as the nightly check stored it (metric, name, before, after)."""
    before, after = float(step["before"]), float(step["after"])
    midpoint = (before + after) / 2
    unit = "ms" if step["metric"] == "latency" else ""  # as nightly.described_step
    name = str(step.get("name") or step["metric"])
    metric = str(step["metric"])
    if not values:
        text = f"{name}: the re-run measured nothing"
        return StepConfirmation(
            metric=metric,
            name=name,
            before=before,
            after=after,
            verdict=NO_FIGURE,
            midpoint=midpoint,
            value=None,
            low=None,
            high=None,
            repeats=0,
            text=text,
        )
    value = statistics.median(values)
    low, high = mean_interval(values)
    slower = value < midpoint if after < before else value > midpoint
    verdict = CONFIRMED if slower else NOISE
    change = (value - before) / before * 100 if before else math.nan
    side = "the step's side" if slower else "the nights before it"
    text = (
        f"{name} re-run {figure(value, unit)} ({signed_pct(change)} from "
        f"{figure(before, unit)}, {len(values)} repeats, 95 % interval "
        f"{figure(low, unit)} to {figure(high, unit)}): closer to {side} "
        f"({figure(after, unit)} after the step, midpoint {figure(midpoint, unit)}): {verdict}"
    )
    return StepConfirmation(
        metric=metric,
        name=name,
        before=before,
        after=after,
        verdict=verdict,
        midpoint=midpoint,
        value=value,
        low=low,
        high=high,
        repeats=len(values),
        text=text,
    )


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95 % interval of the mean (Student's t); the value itself for one repeat."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean
    t = float(scipy_stats.t.ppf(0.975, len(values) - 1))
    half = t * statistics.stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


@dataclass(frozen=True)
class CellConfirmation:
    identity: str
    label: str
    verdict: str
    steps: list[StepConfirmation]

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "label": self.label,
            "verdict": self.verdict,
            "steps": [s.to_dict() for s in self.steps],
        }


def confirm_cell(
    cell: Mapping[str, Any], figures: Mapping[str, Sequence[float]]
) -> CellConfirmation:
    """A flagged cell as the alert stored it (identity, label, its alerted steps) against
    the re-run's figures by metric ({"throughput": [...], "latency": [...]})."""
    steps = [
        confirm_step(step, figures.get(str(step["metric"]), []))
        for step in cell.get("steps", [])
        if step.get("alert")
    ]
    verdicts = {s.verdict for s in steps}
    verdict = CONFIRMED if CONFIRMED in verdicts else NOISE if NOISE in verdicts else NO_FIGURE
    return CellConfirmation(
        identity=str(cell["identity"]),
        label=str(cell.get("label", "")),
        verdict=verdict,
        steps=steps,
    )


def alert_verdict(cells: Sequence[CellConfirmation]) -> str:
    """Confirmed when any cell is; noise when the re-run measured every cell and none is;
    NO_FIGURE when it measured none."""
    verdicts = {c.verdict for c in cells}
    if CONFIRMED in verdicts:
        return CONFIRMED
    return NOISE if NOISE in verdicts else NO_FIGURE


def verdict_text(cells: Sequence[CellConfirmation]) -> str:
    """What the confirmation found, in words, one line a step."""
    lines = [f"{c.label}: {s.text}" for c in cells for s in c.steps]
    return "\n".join(lines)
