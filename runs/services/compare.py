"""Batches and runs side by side (the compare page and its API): the sides read by key (a
finished batch's figures as stored with its answer), each other side compared cell by
cell with the first (runs/analysis/comparison.py), and one scaling chart with a colour
per side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runs.analysis import charts, comparison, results
from runs.analysis.host_metrics.host_summary import cell_host_metrics
from runs.services import selectors, stored_results

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
    found = comparison_sides(keys=keys[:MAX_SIDES])
    sides = [found[k] for k in keys if k in found]
    pairs = comparison.compare_all(sides)
    colours = [results.PALETTE[i % len(results.PALETTE)] for i in range(len(sides))]
    chart = [line for side, c in zip(sides, colours, strict=True) for line in _lines(side, c)]
    machines = [(side, cell_host_metrics(side.runs)) for side in sides]
    return Comparison(sides, pairs, chart, colours, machines)


def comparison_sides(*, keys: list[str]) -> dict[str, comparison.Side]:
    """The sides by key ("b12", "r345"): a finished batch's figures as stored with its
    answer (runs/services/stored_results.py), the others read from their runs."""
    batch_ids = [int(k[1:]) for k in keys if k[0] == "b"]
    with_side = stored_results.with_stored(
        selectors.batches_with_plan().filter(pk__in=batch_ids), baseline=None, part="side"
    )
    batches = {batch.pk: batch for batch in with_side}
    stored = {pk: side for pk, b in batches.items() if (side := stored_results.batch_side(batch=b))}
    return selectors.comparison_sides(keys, batches, stored)


def _lines(side: comparison.Side, colour: str) -> list[dict[str, Any]]:
    lines = charts.scaling_chart(results.group_series(side.runs))
    return [line | {"label": f"{side.key} · {line['label']}", "colour": colour} for line in lines]
