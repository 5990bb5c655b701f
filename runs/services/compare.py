"""Batches and runs side by side (the compare page): the sides read by key, each other
side compared cell by cell with the first (runs/analysis/comparison.py), and one scaling
chart with a colour per side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runs.analysis import charts, comparison, results
from runs.analysis.host_metrics import cell_host_metrics
from runs.services import selectors

MAX_SIDES = 8


@dataclass(frozen=True)
class Comparison:
    sides: list[comparison.Side]  # the first is the baseline
    pairs: list[comparison.Pair]  # verdicts corrected over the page (Holm)
    chart: list[dict[str, Any]]  # the scaling chart's lines, a colour per side
    colours: list[str]
    # per side, what the machines did in each cell and its bottleneck
    host_metrics: list[tuple[comparison.Side, list[dict[str, Any]]]]


def sides_compare(*, keys: list[str]) -> Comparison:
    """The sides asked for ("b12" a batch, "r345" a run; missing ones left out), each
    against the first."""
    found = selectors.comparison_sides(keys[:MAX_SIDES])
    sides = [found[k] for k in keys if k in found]
    pairs = comparison.compare_all(sides)
    colours = [results.PALETTE[i % len(results.PALETTE)] for i in range(len(sides))]
    chart = [line for side, c in zip(sides, colours, strict=True) for line in _lines(side, c)]
    machines = [(side, cell_host_metrics(side.runs)) for side in sides]
    return Comparison(sides, pairs, chart, colours, machines)


def _lines(side: comparison.Side, colour: str) -> list[dict[str, Any]]:
    lines = charts.scaling_chart(results.group_series(side.runs))
    return [line | {"label": f"{side.key} · {line['label']}", "colour": colour} for line in lines]
