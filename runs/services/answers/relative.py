"""A batch's relative table (runs/analysis/relative.py): its runs read once with what the
table needs beyond their figures (each run's test item, its server's name, install and
config), for the results page, the report, the API and its CSV."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from runs.analysis import relative
from runs.analysis.relative import RelativeTable, TableRun
from runs.analysis.results import RunFigures
from runs.analysis.series import plan_order
from runs.frozen import FrozenPlan
from runs.models import Batch
from runs.services.answers.exports import csv_lines
from runs.services.answers.results import ResultsRun, ResultsRuns, batch_results_runs
from runs.sysbench.cells import cell_identity, item_index
from runs.sysbench.values import render_value


def batch_relative(
    *, batch: Batch, axis: str = "", read: ResultsRuns | None = None
) -> RelativeTable | None:
    """The batch's relative table with `axis`'s values as its columns (by default the
    servers, else the first setting, option or the threads that vary); None when nothing
    varies between its runs."""
    read = read or batch_results_runs(batch=batch)
    plan = FrozenPlan.from_params(batch.params)
    names = target_names(plan)
    runs = [
        table_run(run, figures, plan, names)
        for run, figures in zip(read.runs, read.figures, strict=True)
    ]
    orders: dict[str, Sequence[str]] = dict(plan_order(plan.server_settings, plan.option_axes))
    orders[relative.SERVER] = server_order(plan, names)
    return relative.relative_table(runs, axis=axis, orders=orders)


def batch_relative_csv(*, batch: Batch, axis: str = "") -> Iterator[str]:
    table = batch_relative(batch=batch, axis=axis)
    rows = table.csv_rows() if table is not None else [list(relative.CSV_HEADER)]
    return csv_lines([str(name) for name in rows[0]], rows[1:])


def target_names(plan: FrozenPlan) -> dict[int, str]:
    """A servers axis's names by id, as frozen with the batch."""
    return {int(t["id"]): str(t.get("name", t["id"])) for t in plan.targets if "id" in t}


def table_run(
    run: ResultsRun, figures: RunFigures, plan: FrozenPlan, names: Mapping[int, str]
) -> TableRun:
    test, family, order = _test_item(run, plan)
    return TableRun(
        figures, test=test, family=family, test_order=order, server=_server(run, plan, names)
    )


def _test_item(run: ResultsRun, plan: FrozenPlan) -> tuple[str, str, int]:
    """The run's item of the plan's tests axis: its label, family and place."""
    if not plan.tests:
        return "", "", 0
    test = run.test or plan.test
    given = cell_identity(run.cell_key).get("test_options")
    index = item_index(plan.tests, test, given if isinstance(given, dict) else {})
    if index is None:
        return test, "other", len(plan.tests)
    item = plan.tests[index]
    return item_label(item), str(item.get("family") or "other"), index


def item_label(item: Mapping[str, Any]) -> str:
    """An item as a row names it: its name, else its test and options."""
    if item.get("name"):
        return str(item["name"])
    options = item.get("options") or {}
    shown = [
        f"{k}={render_value(v) if isinstance(v, bool | int | float | str) else v}"
        for k, v in options.items()
    ]
    return " ".join([str(item.get("test", "")), *shown])


def _server(run: ResultsRun, plan: FrozenPlan, names: Mapping[int, str]) -> dict[str, str]:
    server: dict[str, str] = {}
    if plan.targets:
        server["target"] = names.get(run.target_id or 0, str(run.target_id))
    if plan.servers.get("installs"):
        server["install"] = run.install
    if plan.servers.get("configs"):
        server["config"] = run.config
    return server


def server_order(plan: FrozenPlan, names: Mapping[int, str]) -> list[str]:
    """The servers' columns in the plan's order: targets, then installs, then configs."""
    axes: dict[str, list[str]] = {}
    if plan.targets:
        axes["target"] = [names[int(t["id"])] for t in plan.targets if "id" in t]
    if plan.servers.get("installs"):
        axes["install"] = [str(v) for v in plan.servers["installs"]]
    if plan.servers.get("configs"):
        configs = plan.servers["configs"]
        axes["config"] = [
            str(c.get("label", "")) if isinstance(c, dict) else str(c) for c in configs
        ]
    return [
        relative.server_label(dict(zip(axes, values, strict=True)))
        for values in itertools.product(*axes.values())
    ]
