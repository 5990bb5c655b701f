"""The automatic modes of a running batch (repeats auto, threads search, rate search):
once every queued run has run, ask runs/analysis/auto/rounds.py which runs to add, and
queue them as ordinary runs, each with the reason it runs. The runner loops until
nothing is added.

The searches read only the stored runs, so a batch resumed after a crash goes on from
where it was. The new runs of one round are shuffled with the batch's seed, so that the
extra repeats of noisy cells interleave as the plan's rounds do.
"""

from __future__ import annotations

import logging
import random
from typing import Any

from django.db import transaction
from django.db.models import Max

from runs.analysis import results
from runs.analysis.auto import rounds
from runs.analysis.auto import settings as auto_settings
from runs.analysis.results import RunFigures
from runs.analysis.series import group_series, plan_order
from runs.frozen import FrozenPlan
from runs.models import Batch, Run
from runs.sysbench import matrix
from runs.sysbench.cells import cell_identity
from runs.sysbench.command import expected_duration_s

logger = logging.getLogger(__name__)


def batch_extend(*, batch: Batch) -> int:
    """Queue the runs the batch's auto modes ask for next; how many were added (0: the
    batch has its answers, or asks for none)."""
    plan = FrozenPlan.from_params(batch.params)
    settings = auto_settings.auto_from_dict(plan.auto)
    if not settings.any:
        return 0
    runs = list(
        batch.runs.order_by("position")
        .select_related("target")
        .defer("raw_log", "reports", "histogram")
    )
    figures = [RunFigures.of(run) for run in runs]
    order = plan_order(
        plan.server_settings, plan.option_axes, plan.targets, plan.servers, plan.tests
    )
    series = group_series(figures, order)
    baseline = series[0].key if series else ""  # the plan's first values, as the results'
    cells = rounds.next_cells(settings, figures, plan.repeats or 1, baseline)
    if not cells:
        return 0
    if len(runs) + sum(c.repeats for c in cells) > matrix.MAX_RUNS:
        _warn(batch, f"the auto modes stopped at the limit of {matrix.MAX_RUNS} runs")
        return 0
    added = _queue(batch, cells, seed=batch.seed + len(runs))
    logger.info("batch %s: %d runs added by its auto modes", batch.pk, added)
    return added


@transaction.atomic
def _queue(batch: Batch, cells: list[rounds.NewCell], *, seed: int) -> int:
    planned = [(cell, one) for cell in cells for one in _expand(batch, cell)]
    # A seeded, replayable shuffle is the point here; nothing depends on it being secret.
    random.Random(seed).shuffle(planned)  # noqa: S311
    # Cells sharing a data set stay together: one prepare serves them (shared policy).
    order = {one.dataset: i for i, (_, one) in reversed(list(enumerate(planned)))}
    planned.sort(key=lambda pair: order[pair[1].dataset])
    rounds = _rounds(batch)
    start = (batch.runs.aggregate(last=Max("position"))["last"] or 0) + 1
    new_runs = []
    for offset, (cell, one) in enumerate(planned):
        key = one.key()
        new_runs.append(
            Run(
                batch=batch,
                position=start + offset,
                round=rounds.get(key, 0),
                cell_key=key,
                threads=one.threads,
                target_id=one.target if one.target is not None else batch.target_id,
                test=one.test,
                install=one.install,
                config=one.config,
                settings=one.settings,
                options=one.run_options,
                expected_duration_s=expected_duration_s(one.options),
                reason=cell.reason[:300],
            )
        )
        rounds[key] = rounds.get(key, 0) + 1
    Run.objects.bulk_create(new_runs)
    return len(new_runs)


def _expand(batch: Batch, cell: rounds.NewCell) -> list[matrix.Cell]:
    """The cell's runs, its options checked and keyed as the plan's own cells are: the
    plan's tests and servers axes expanded at the cell's settings and options, and of
    those the test, target, install and config of the cell it extends."""
    plan = FrozenPlan.from_params(batch.params)
    expanded = matrix.expand(
        test=plan.test,
        tests=[_test_spec(item) for item in plan.tests],
        servers=_server_axes(plan),
        fixed_options=plan.options,
        axes=matrix.Axes(
            threads=[cell.threads],
            server_settings={k: [v] for k, v in cell.settings.items()},
            # the target is the servers axis's, not an option
            options={k: [v] for k, v in cell.options.items() if k != results.TARGET},
        ),
        repeats=cell.repeats,
        order="ramp",
        seed=batch.seed,
        dataset_policy="fresh" if plan.dataset_policy == "fresh" else "shared",
    )
    extended = cell_identity(cell.extends)
    return [one for one in expanded if _same_place(cell_identity(one.key()), extended)]


PLACE = ("test", "test_options", "target", "install", "config")  # a key's where, not its how


def _same_place(key: dict[str, object], extended: dict[str, object]) -> bool:
    return all(key.get(name) == extended.get(name) for name in PLACE)


def _test_spec(item: dict[str, Any]) -> matrix.TestSpec:
    """A tests axis's item as the plan's launch read it (runs/services/plan_axes.py)."""
    return matrix.TestSpec(
        test=str(item.get("test", "")),
        options=dict(item.get("options") or {}),
        family=str(item.get("family", "")),
        rebuild=bool(item.get("rebuild", False)),
    )


def _server_axes(plan: FrozenPlan) -> matrix.ServerAxes:
    """The servers axis as the plan's launch expanded it (its restart-only settings aside:
    a key does not name them)."""
    configs = plan.servers.get("configs") or []
    return matrix.ServerAxes(
        targets=tuple(int(t["id"]) for t in plan.targets) if len(plan.targets) > 1 else (),
        installs=tuple(str(label) for label in plan.servers.get("installs") or []),
        configs=tuple(str(c.get("label", "")) if isinstance(c, dict) else str(c) for c in configs),
    )


def _rounds(batch: Batch) -> dict[str, int]:
    """The next repeat number of each cell."""
    counts: dict[str, int] = {}
    for key in batch.runs.values_list("cell_key", flat=True):
        counts[key] = counts.get(key, 0) + 1
    return counts


def _warn(batch: Batch, message: str) -> None:
    if message not in batch.warnings:
        batch.warnings = [*batch.warnings, message]
        batch.save(update_fields=["warnings"])
