"""Batches and runs side by side (the compare page and its API): the sides read by key (a
finished batch's figures as stored with its answer), each other side compared cell by
cell with the first (runs/analysis/comparison.py), and one scaling chart with a colour
per side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runs.analysis import batch_results, charts, comparison, results
from runs.analysis.host_metrics.host_summary import cell_host_metrics
from runs.analysis.series import PALETTE, plan_order
from runs.analysis.why import inside
from runs.frozen import FrozenPlan
from runs.models import Batch, Run
from runs.services import selectors
from runs.services.answers import stored_results

MAX_SIDES = 8


@dataclass(frozen=True)
class Comparison:
    sides: list[comparison.Side]  # the first is the baseline
    pairs: list[comparison.Pair]  # verdicts corrected over the page (Holm)
    chart: list[dict[str, Any]]  # the scaling chart's lines, a colour per side
    colours: list[str]
    # per side, what the machines did in each cell and its bottleneck
    host_metrics: list[tuple[comparison.Side, list[dict[str, Any]]]]
    # per other side, cell by cell, what moved in the server's waits per transaction
    waits_moved: list[tuple[comparison.Side, list[dict[str, Any]]]]
    # the latency percentile the sides measured ("p99"), or each side's when they differ
    latency_label: str = "p95"


def sides_compare(*, keys: list[str]) -> Comparison:
    """The sides asked for ("b12" a batch, "r345" a run; missing ones left out), each
    against the first."""
    found = comparison_sides(keys=keys[:MAX_SIDES])
    sides = [found[k] for k in keys if k in found]
    pairs = comparison.compare_all(sides)
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(sides))]
    chart = [line for side, c in zip(sides, colours, strict=True) for line in _lines(side, c)]
    machines = [(side, cell_host_metrics(side.runs)) for side in sides]
    labels = dict.fromkeys(batch_results.latency_label(side.runs, {}) for side in sides)
    label = "/".join(labels) or "p95"
    return Comparison(sides, pairs, chart, colours, machines, waits_moved(sides), label)


def waits_moved(sides: list[comparison.Side]) -> list[tuple[comparison.Side, list[dict[str, Any]]]]:
    """Each other side against the first: what moved in the server's waits, cell by cell."""
    moved = [(side, inside.cells_moved(sides[0].runs, side.runs, side.label)) for side in sides[1:]]
    return [(side, rows) for side, rows in moved if rows]


def comparison_sides(*, keys: list[str]) -> dict[str, comparison.Side]:
    """The sides by key ("b12", "r345"): a finished batch's figures as stored with its
    answer (runs/services/answers/stored_results.py), the others read from their runs."""
    batch_ids = [int(k[1:]) for k in keys if k[0] == "b"]
    with_side = stored_results.with_stored(
        selectors.batches_with_plan().filter(pk__in=batch_ids), baseline=None, part="side"
    )
    batches = {batch.pk: batch for batch in with_side}
    stored = {pk: side for pk, b in batches.items() if (side := stored_results.batch_side(batch=b))}
    return _sides_read(keys, batches, stored)


def _lines(side: comparison.Side, colour: str) -> list[dict[str, Any]]:
    lines = charts.scaling_chart(side.series)
    return [line | {"label": f"{side.key} · {line['label']}", "colour": colour} for line in lines]


def _sides_read(
    keys: list[str], batches: dict[int, Batch], stored: dict[int, selectors.SideFigures]
) -> dict[str, comparison.Side]:
    """The sides of a comparison by key ("b12" a batch, "r345" a run), in two queries at
    most: the runs of the batches whose figures are not `stored`, the runs asked for; keys
    of batches or runs that do not exist are left out."""
    batch_ids = [int(k[1:]) for k in keys if k[0] == "b"]
    run_ids = [int(k[1:]) for k in keys if k[0] == "r"]
    figures = dict(stored or {})
    by_batch: dict[int, list[Run]] = {}
    for run in _runs_of_batches([pk for pk in batch_ids if pk in batches and pk not in figures]):
        by_batch.setdefault(run.batch_id, []).append(run)
    for pk, members in by_batch.items():
        busy = comparison.host_busy_pct(r.host_summary for r in members)
        figures[pk] = ([results.RunFigures.of(r) for r in members], busy)
    single = {r.pk: r for r in _runs_by_ids(run_ids)}
    sides: dict[str, comparison.Side] = {}
    for key in keys:
        number = int(key[1:])
        if key[0] == "b" and number in batches:
            runs, busy = figures.get(number, ([], None))
            batch = batches[number]
            sides[key] = comparison.Side(key, _batch_label(batch), runs, busy, _order(batch))
        elif key[0] == "r" and number in single:
            run = single[number]
            label = f"run {run.pk} of batch {run.batch_id} ({run.label})"
            busy = comparison.host_busy_pct([run.host_summary])
            sides[key] = comparison.Side(key, label, [results.RunFigures.of(run)], busy)
    return sides


def _order(batch: Batch) -> dict[str, list[str]]:
    """Each axis's values in the batch's plan's order: its series are shown so."""
    plan = FrozenPlan.from_params(batch.params)
    return plan_order(
        plan.server_settings, plan.option_axes, plan.targets, plan.servers, plan.tests
    )


def _batch_label(batch: Batch) -> str:
    name = batch.plan.name if batch.plan else (batch.label or "import")
    target = f" on {batch.target.name}" if batch.target else ""
    return f"batch {batch.pk}: {name}{target}, {batch.created_at:%Y-%m-%d %H:%M}"


def _runs_by_ids(run_ids: list[int]) -> list[Run]:
    if not run_ids:
        return []  # not even compiled: the query costs more to build than to run
    return list(
        Run.objects.filter(pk__in=run_ids)
        .select_related("batch__plan", "batch__target", "target")
        .defer("raw_log", "reports", "argv", "histogram")
    )


def _runs_of_batches(batch_ids: list[int]) -> list[Run]:
    if not batch_ids:
        return []  # every batch's figures were stored
    return list(
        Run.objects.filter(batch_id__in=batch_ids)
        .select_related("target")  # named on a servers axis (results.run_axes)
        .order_by("batch_id", "position")
        .defer("raw_log", "reports", "argv", "histogram")
    )
