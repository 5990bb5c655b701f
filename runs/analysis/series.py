"""A batch's runs grouped into series, one per combination of server settings, option-axis
values and, where the plan varies them, target, test, install and config: each series a
point per thread count (its repeats reduced to stats.ESTIMATOR, its throughput, qps and
latency alike, with the min-max spread)
and the peak, where throughput peaks and how far it falls beyond. The series come in the
plan's order of each axis's values (plan_order), the first the baseline, each with its
colour (PALETTE) on every chart and table of a page.

Pure: no Django, no I/O. The runs come in as results.RunFigures.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from runs.analysis.axes import TARGET, cell_axes_order
from runs.analysis.noise import stats
from runs.analysis.results import FINISHED_WELL, NOT_RUN, RunFigures, series_label

# Colour-blind-friendly and distinct on white (Okabe-Ito, then Tableau); series i gets
# colour i on every chart of a page, so a setting keeps its colour from chart to table.
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00",
           "#56b4e9", "#8c564b", "#7f7f7f", "#bcbd22", "#1f1f1f")  # fmt: skip


@dataclass(frozen=True)
class Point:
    """One cell of a series: its repeats reduced to stats.ESTIMATOR and min-max."""

    threads: int
    run_ids: tuple[int, ...]
    values: tuple[float, ...]  # throughput of each finished repeat
    qps: float | None  # stats.ESTIMATOR of the repeats' qps, as their throughput
    latency_ms: float | None  # stats.ESTIMATOR of the repeats' latency percentile
    latency_min: float | None
    latency_max: float | None
    errors: float | None  # ignored errors, summed over repeats
    failed: int  # repeats that did not finish well
    forced_shutdowns: int = 0  # repeats sysbench stopped at --time (--forced-shutdown)
    unfinished: int = 0  # the transactions those left unfinished, summed

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    @cached_property
    def mean(self) -> float | None:
        """The cell's throughput: stats.ESTIMATOR, as every table, ratio and verdict (once:
        a page asks it of each cell a dozen times)."""
        return stats.geometric_mean(self.values)

    @property
    def low(self) -> float | None:
        return min(self.values) if self.values else None

    @property
    def high(self) -> float | None:
        return max(self.values) if self.values else None


@dataclass(frozen=True)
class Peak:
    threads: int
    value: float
    last_threads: int
    last_value: float

    @property
    def falloff_pct(self) -> float | None:
        """How far throughput falls from the peak to the largest thread count, in %
        (negative); None when the peak is at the largest thread count."""
        if self.last_threads == self.threads or self.value == 0:
            return None
        return (self.last_value - self.value) / self.value * 100


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    settings: dict[str, str]
    options: dict[str, str]
    colour: str
    points: list[Point]
    axes: dict[str, str] = field(default_factory=dict)  # its test, install, config (cell_axes)

    def at(self, threads: int) -> Point | None:
        return next((p for p in self.points if p.threads == threads), None)

    @property
    def peak(self) -> Peak | None:
        measured = [p for p in self.points if p.mean is not None]
        if not measured:
            return None
        best = max(measured, key=lambda p: p.mean or 0.0)
        last = measured[-1]
        return Peak(
            threads=best.threads,
            value=best.mean or 0.0,
            last_threads=last.threads,
            last_value=last.mean or 0.0,
        )


def group_series(
    runs: Iterable[RunFigures], order: Mapping[str, Sequence[str]] | None = None
) -> list[Series]:
    """One series per combination of settings, options, test, install and config (the
    cell's identity but its threads), in the plan's order of each axis's
    values when `order` gives it (plan_order: the first series is then the plan's first
    values, its baseline), else sorted by their values; each with one point per thread
    count, ascending."""
    by_key: dict[str, list[RunFigures]] = {}
    for run in runs:
        by_key.setdefault(run.series_key, []).append(run)
    firsts = {key: members[0] for key, members in by_key.items()}
    keys = sorted(by_key, key=lambda k: (_planned(firsts[k], order or {}), _natural(firsts[k])))
    constant = plan_wide(list(firsts.values())) if order is not None else {}
    result = []
    for index, key in enumerate(keys):
        members = by_key[key]
        first = members[0]
        settings = {k: v for k, v in first.settings.items() if k not in constant}
        options = {k: v for k, v in first.axis_options.items() if k not in constant}
        axes = {k: v for k, v in first.cell_axes.items() if k not in constant}
        result.append(
            Series(
                key=key,
                label=series_label(settings, options, axes),
                settings=first.settings,
                options=first.axis_options,
                colour=PALETTE[index % len(PALETTE)],
                points=_points(members),
                axes=first.cell_axes,
            )
        )
    return result


def plan_wide(runs: Sequence[RunFigures]) -> dict[str, str]:
    """The settings and option values every run shares (max_connections=1100 through the
    whole plan): said once for the plan, not in every series' name."""
    if not runs:
        return {}
    shared = _values(runs[0])
    for run in runs[1:]:
        values = _values(run)
        shared = {k: v for k, v in shared.items() if values.get(k) == v}
    return shared


def _values(run: RunFigures) -> dict[str, str]:
    """Every axis value of a run but its threads, by axis name."""
    return {**run.settings, **run.axis_options, **run.cell_axes}


def plan_order(
    server_settings: Mapping[str, Sequence[Any]],
    option_axes: Mapping[str, Sequence[Any]],
    targets: Sequence[Mapping[str, Any]] = (),
    servers: Mapping[str, Any] | None = None,
    tests: Sequence[Mapping[str, Any]] = (),
) -> dict[str, list[str]]:
    """Each axis's values in the plan's order: `["1", "0"]` puts flush=1 first; the
    servers axis (FrozenPlan.targets) its first target, the baseline; its installs and
    configs (FrozenPlan.servers) and tests (FrozenPlan.tests) in the user's order."""
    order = {name: [str(v) for v in values] for name, values in server_settings.items()}
    # as axis_options reads a cell's key back: str() of the value
    order.update({name: [str(v) for v in values] for name, values in option_axes.items()})
    if targets:
        order[TARGET] = [str(t.get("name", "")) for t in targets]
    order.update(cell_axes_order(tests, servers or {}))
    return order


def _planned(run: RunFigures, order: Mapping[str, Sequence[str]]) -> tuple[int, ...]:
    """Where the run's values stand in the plan's lists (a value not listed goes last, a
    run without the axis after it)."""
    values = _values(run)
    ranks = []
    for name in sorted(order):
        listed = list(order[name])
        value = str(values[name]) if name in values else None
        ranks.append(listed.index(value) if value in listed else len(listed) + (value is None))
    return tuple(ranks)


def _natural(run: RunFigures) -> tuple[Any, ...]:
    # flush=2 before flush=10: numbers compare as numbers.
    def value(v: str) -> tuple[int, float, str]:
        try:
            return (0, float(v), "")
        except ValueError:
            return (1, 0.0, v)

    settings = tuple((k, value(run.settings[k])) for k in sorted(run.settings))
    options = tuple((k, value(run.axis_options[k])) for k in sorted(run.axis_options))
    axes = tuple((k, value(run.cell_axes[k])) for k in sorted(run.cell_axes))
    return axes + settings + options


def _points(runs: list[RunFigures]) -> list[Point]:
    by_threads: dict[int, list[RunFigures]] = {}
    for run in runs:
        by_threads.setdefault(run.threads, []).append(run)
    return [_point(threads, by_threads[threads]) for threads in sorted(by_threads)]


def _point(threads: int, runs: list[RunFigures]) -> Point:
    ordered = sorted(runs, key=lambda r: r.round)
    good = [r for r in ordered if r.status in FINISHED_WELL]
    values = tuple(v for r in good if (v := r.throughput) is not None)
    qps = [v for r in good if (v := r.figures.qps) is not None]
    latencies = [v for r in good if (v := r.latency_ms) is not None]
    errors = [v for r in good if (v := r.figures.errors) is not None]
    forced = [r for r in good if r.figures.forced_shutdown]
    return Point(
        threads=threads,
        run_ids=tuple(r.id for r in ordered),
        values=values,
        qps=stats.geometric_mean(qps),
        latency_ms=stats.geometric_mean(latencies),
        latency_min=min(latencies) if latencies else None,
        latency_max=max(latencies) if latencies else None,
        errors=sum(errors) if errors else None,
        failed=sum(r.status not in FINISHED_WELL and r.status not in NOT_RUN for r in runs),
        forced_shutdowns=len(forced),
        unfinished=sum(r.figures.unfinished_transactions or 0 for r in forced),
    )


def thread_counts(series: Sequence[Series]) -> list[int]:
    return sorted({p.threads for s in series for p in s.points})
