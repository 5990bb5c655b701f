"""The nightly check: each cell of a night against the band of the nights before it, and
the steps of its series (runs/analysis/nightly/change_points.py); the alert is a new slower step.

The rule and its verdicts are runs/analysis/nightly/regressions.py's; this module applies them
night by night, knowing which batch each night was and which steps the previous check had
seen. Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runs.analysis.nightly import change_points
from runs.analysis.nightly.regressions import (
    LATENCY,
    MIN_NIGHTS,
    STEP_NIGHTS,
    THROUGHPUT,
    Analysis,
    CellCheck,
    CellNight,
    Metric,
    figure,
    judge,
)
from runs.analysis.percent import signed_pct


@dataclass(frozen=True)
class Seen:
    """What the nightly check knows besides the figures: the batch of each night (tonight
    first, then `previous` in order) and the steps the previous check recorded per cell
    (None when it recorded none, so that only a step at tonight's night is new)."""

    batches: Sequence[int | None] = ()
    steps: Mapping[str, Sequence[Mapping[str, Any]]] | None = None


def analyse(
    night: Mapping[str, CellNight],
    previous: Sequence[Mapping[str, CellNight]],
    *,
    threshold_pct: float,
    history_nights: int,
    seen: Seen | None = None,
) -> Analysis:
    """Every cell of `night` against the previous successful nights, most recent first.

    The baseline of a cell is made of the last `history_nights` nights that measured the
    same cell (at least MIN_NIGHTS of them, whatever the plan says, to judge at all); its
    steps are looked for over the last STEP_NIGHTS nights.
    """
    window = max(history_nights, MIN_NIGHTS)
    seen = seen or Seen()
    cells = []
    for identity, cell in night.items():
        checks, steps = [], []
        for metric in (THROUGHPUT, LATENCY):
            history = _history(identity, metric, previous, window)
            name = cell.metric_name(metric)
            checks.append(
                judge(
                    metric,
                    name=name,
                    value=cell.value(metric),
                    history=history,
                    threshold_pct=threshold_pct,
                )
            )
            series = _series(identity, metric, night, previous)
            steps += night_steps(
                series, metric, name=name, seen=seen, identity=identity, threshold_pct=threshold_pct
            )
        cells.append(
            CellCheck(
                identity=identity,
                label=cell.label,
                threads=cell.threads,
                settings=cell.settings,
                axis_options=cell.axis_options,
                repeats=cell.repeats,
                checks=checks,
                steps=steps,
            )
        )
    cells.sort(key=lambda c: (c.label, c.identity))
    return Analysis(threshold_pct=threshold_pct, window=window, cells=cells)


def _history(
    identity: str, metric: Metric, previous: Sequence[Mapping[str, CellNight]], window: int
) -> list[float]:
    values = []
    for night in previous:
        cell = night.get(identity)
        value = cell.value(metric) if cell is not None else None
        if value is not None:
            values.append(value)
        if len(values) == window:
            break
    return values


def _series(
    identity: str,
    metric: Metric,
    night: Mapping[str, CellNight],
    previous: Sequence[Mapping[str, CellNight]],
) -> list[float | None]:
    """The cell's figures, tonight last, over STEP_NIGHTS nights at most."""
    nights = [*reversed(previous[: STEP_NIGHTS - 1]), night]
    return [n[identity].value(metric) if identity in n else None for n in nights]


# --- the steps --------------------------------------------------------------------------------


def night_steps(
    series: Sequence[float | None],
    metric: Metric,
    *,
    name: str,
    seen: Seen,
    identity: str,
    threshold_pct: float,
) -> list[dict[str, Any]]:
    """The steps of a cell's series ending tonight, each said new or not and alerted or not.
    Nothing before MIN_NIGHTS earlier nights, as for the band."""
    earlier = sum(v is not None for v in series[:-1])
    if series[-1] is None or earlier < MIN_NIGHTS:
        return []
    batches = _batches(seen, len(series))
    known = [
        batches.index(s.get("batch")) if s.get("batch") in batches else None
        for s in (seen.steps or {}).get(identity, [])
        if s.get("metric") == metric.key
    ]
    steps = change_points.find_steps(series, higher_is_better=metric.higher_is_better)
    return [
        _step(step, metric, name, batches, known, seen.steps is None, threshold_pct)
        for step in steps
    ]


def _batches(seen: Seen, count: int) -> list[int | None]:
    """The batch of each night of a series of `count` nights, oldest first."""
    ids = list(seen.batches[:count]) + [None] * max(0, count - len(seen.batches))
    return ids[::-1]


def _step(
    step: change_points.Step,
    metric: Metric,
    name: str,
    batches: list[int | None],
    known: list[int | None],
    first_check: bool,
    threshold_pct: float,
) -> dict[str, Any]:
    tonight = step.index == len(batches) - 1
    was_seen = any(k is not None and abs(k - step.index) <= 1 for k in known)
    new = tonight or (not first_check and not was_seen)
    alert = new and step.direction == change_points.SLOWER
    return {
        **described_step(step, metric, name=name, batches=batches),
        "nights_ago": len(batches) - 1 - step.index,
        "new": new,
        "alert": alert and abs(step.change_pct) >= threshold_pct,
    }


def series_steps(
    series: Sequence[float | None], metric: Metric, *, name: str, batches: Sequence[int]
) -> list[dict[str, Any]]:
    """The steps of a cell's series over the nights of `batches` (oldest first), as the
    history page and API mark them."""
    steps = change_points.find_steps(series, higher_is_better=metric.higher_is_better)
    return [described_step(s, metric, name=name, batches=batches) for s in steps]


def described_step(
    step: change_points.Step,
    metric: Metric,
    *,
    name: str,
    batches: Sequence[int | None],
) -> dict[str, Any]:
    """A step with its metric, the batch of its first night after, and its sentence."""
    unit = "ms" if metric is LATENCY else ""
    return {
        **step.to_dict(),
        "metric": metric.key,
        "name": name,
        "batch": batches[step.index],
        "text": (
            f"{name} stepped {step.direction}: {figure(step.before, unit)} to "
            f"{figure(step.after, unit)} ({signed_pct(step.change_pct)}, 95 % interval "
            f"{signed_pct(step.low_pct)} to {signed_pct(step.high_pct)})"
        ),
    }
