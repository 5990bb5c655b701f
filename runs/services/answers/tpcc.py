"""A TPC-C batch's figures, for its results page, its API answer, its report and its CSV:
each cell's tpmC (or why there is none), tps, the mix where printed, ignored errors per
second and warehouses, and each run's (runs/analysis/tpcc.py reads one run).

Told from the batch's frozen plan, so another batch's page reads nothing more; a TPC-C
batch's figures cost two queries whatever its size: its finished runs, and one row a run
of its steady samples' means, averaged by the database rather than sent sample by sample.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from django.db.models import Avg, Count, FloatField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from runs.analysis import tpcc
from runs.analysis.charts import threads_text
from runs.analysis.noise.stats import geometric_mean
from runs.analysis.results import FINISHED_WELL, differing_keys, series_label
from runs.columns import RunSummary
from runs.frozen import FrozenPlan
from runs.models import Batch, Run, Sample

# The mix by the sample's key and its name (the CSV's columns are the keys).
MIX_KEYS = tpcc.MIX
TpccRun = tpcc.TpccRun


@dataclass(frozen=True)
class TpccCell:
    label: str
    repeats: int
    tpmc: float | None  # the geometric mean of the repeats', as the tables' tps
    tps: float | None
    errors_per_s: float | None
    warehouses: int | None
    table_sets: int
    total_warehouses: int | None
    mix: tuple[tpcc.MixShare, ...] = ()  # the mean of its repeats', when each printed it

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "repeats": self.repeats,
            "tpmc": self.tpmc,
            "tps": self.tps,
            "errors_per_s": self.errors_per_s,
            "warehouses": self.warehouses,
            "table_sets": self.table_sets,
            "total_warehouses": self.total_warehouses,
            "mix": [{"name": m.name, "per_s": m.per_s, "share": m.share} for m in self.mix],
        }


@dataclass(frozen=True)
class BatchTpcc:
    cells: tuple[TpccCell, ...]

    @property
    def no_tpmc_reason(self) -> str:
        """Said once for the page: the reason is the script's, the same in every cell."""
        return tpcc.NO_NEW_ORDERS if any(c.tpmc is None for c in self.cells) else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": [c.to_json() for c in self.cells],
            "no_tpmc_reason": self.no_tpmc_reason,
        }


def plan_is_tpcc(plan: FrozenPlan) -> bool:
    """Its test or script is named TPC-C, or an option, option axis or tests axis gives
    warehouses: what tpcc.is_tpcc tells of one run's command."""
    script = plan.script
    names = [plan.test, *(t.get("test", "") for t in plan.tests)]
    names += [script.name, script.entry] if script else []
    options = [*plan.options, *plan.option_axes, *(script.options if script else ())]
    options += [name for t in plan.tests for name in t.get("options") or {}]
    return any("tpcc" in str(n).lower() for n in names) or any(
        str(o).removeprefix("--").replace("-", "_") in tpcc.WAREHOUSE_OPTIONS for o in options
    )


def batch_tpcc(batch: Batch) -> BatchTpcc | None:
    """The TPC-C figures of each cell of the batch's finished runs; None for a batch that is
    not TPC-C (no query)."""
    found = _finished_figures(batch)
    if found is None:
        return None
    varying = differing_keys([run.options for run, _ in found])  # the cells' own
    cells: dict[str, list[tpcc.TpccRun]] = {}
    labels: dict[str, str] = {}
    for run, figures in found:
        cells.setdefault(run.cell_key, []).append(figures)
        labels.setdefault(run.cell_key, _label(run, varying))
    return BatchTpcc(tuple(_cell(labels[key], runs) for key, runs in cells.items()))


def batch_tpcc_runs(batch: Batch) -> dict[int, tpcc.TpccRun] | None:
    """Each finished run's TPC-C figures by its id (the CSV's columns); None for a batch
    that is not TPC-C (no query)."""
    found = _finished_figures(batch)
    return None if found is None else {run.pk: figures for run, figures in found}


def _finished_figures(batch: Batch) -> list[tuple[Run, tpcc.TpccRun]] | None:
    if not plan_is_tpcc(FrozenPlan.from_params(batch.params)):
        return None
    runs = (
        batch.runs.filter(status__in=FINISHED_WELL)
        .order_by("position")
        .only("cell_key", "threads", "settings", "options", "test", "argv", "summary")
    )
    means = _steady_means(batch)
    pairs = ((run, _run_figures(run, means.get(run.pk))) for run in runs)
    return [(run, figures) for run, figures in pairs if figures is not None]


def _steady_means(batch: Batch) -> dict[int, dict[str, Any]]:
    """Each run's means over its samples after warmup, and how many printed the mix."""
    mix = {key: Avg(Cast(KeyTextTransform(key, "extra"), FloatField())) for key, _ in tpcc.MIX}
    rows = (
        Sample.objects.filter(run__batch=batch, in_warmup=False)
        .values("run_id")
        .annotate(
            tps=Avg("tps"),
            errors_per_s=Avg("errors_per_s"),
            samples=Count("pk"),
            mixed=Count(KeyTextTransform(tpcc.MIX[0][0], "extra")),
            **mix,
        )
    )
    return {row["run_id"]: dict(row) for row in rows}


def _run_figures(run: Run, means: dict[str, Any] | None) -> tpcc.TpccRun | None:
    """The run as one interval of its steady means: tpcc_run's means of it are the same."""
    means = means or {}
    printed_mix = bool(means) and means["mixed"] == means["samples"]
    # A field the lines left out averages to None: it is not there, as in a sample.
    mix = {key: means[key] for key, _ in tpcc.MIX if means.get(key) is not None}
    extra = mix if printed_mix else {}
    intervals = [tpcc.Interval(means["tps"], means["errors_per_s"], extra)] if means else []
    tps = RunSummary.load(run.summary).tps
    return tpcc.tpcc_run(
        argv=run.argv or _plan_argv(run),
        intervals=intervals,
        tps=tps,
    )


def _plan_argv(run: Run) -> list[str]:
    """A run recorded without its command (an import): its test and options as one, so
    the batch's plan, which said it is TPC-C, tells its warehouses."""
    return [f"{run.test or 'tpcc'}.lua", *(f"--{k}={v}" for k, v in run.options.items())]


def _label(run: Run, varying: list[str]) -> str:
    axes = {"test": run.test} if run.test else {}
    options = {str(k): str(v) for k, v in run.options.items() if k in varying}
    threads = threads_text(run.threads)
    named = series_label(run.settings, options, axes) if run.settings or options or axes else ""
    return f"{named} at {threads}" if named else threads


def _cell(label: str, runs: list[tpcc.TpccRun]) -> TpccCell:
    first = runs[0]
    tpmcs = [r.tpmc for r in runs]
    return TpccCell(
        label=label,
        repeats=len(runs),
        tpmc=None if None in tpmcs else geometric_mean([t for t in tpmcs if t is not None]),
        tps=geometric_mean(_known(r.tps for r in runs)),
        errors_per_s=_mean(_known(r.errors_per_s for r in runs)),
        warehouses=first.warehouses,
        table_sets=first.table_sets,
        total_warehouses=first.total_warehouses,
        mix=_mean_mix(runs),
    )


def _mean_mix(runs: list[tpcc.TpccRun]) -> tuple[tpcc.MixShare, ...]:
    """Each transaction's rate, the mean of the repeats', when every repeat printed it."""
    if not all(r.mix for r in runs):
        return ()
    rates = [(name, fmean(r.mix[i].per_s for r in runs)) for i, (_, name) in enumerate(tpcc.MIX)]
    total = sum(rate for _, rate in rates)
    return tuple(tpcc.MixShare(name, rate, rate / total if total else 0.0) for name, rate in rates)


def _known(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None
