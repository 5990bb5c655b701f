"""The history of a plan's batches, as its page and the API show it: its scheduled nights
and its launches by hand (`launched`: which), each one's cells with their figures, the
verdicts the nightly check stored (check.py), and the steps of each cell's series.

It reads each night's cells as its batch stored them when it ended (Batch.night,
nights.py): one row a night, never the runs; a page of nights at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from django.utils import timezone

from runs.analysis.nightly import check as nightly
from runs.analysis.nightly import regressions
from runs.analysis.nightly.regressions import CellNight
from runs.columns import NightCheck
from runs.errors import InvalidInput
from runs.models import Annotation, Batch, LaunchedBy, Plan, Status
from runs.services.nightly import nights as stored_nights
from runs.services.nightly.nights import BATCH_FIELDS

MAX_NIGHTS_SHOWN = 366  # a page of the history: a year of nights at most
# How launched, as the history filters: every launch, scheduled ones, or by hand.
LAUNCHED = {
    "all": stored_nights.LAUNCHES,
    "schedule": (LaunchedBy.SCHEDULE,),
    "hand": (LaunchedBy.UI, LaunchedBy.API, LaunchedBy.CLI),
    "ui": (LaunchedBy.UI,),
    "api": (LaunchedBy.API,),
    "cli": (LaunchedBy.CLI,),
}


@dataclass(frozen=True)
class Night:
    """One scheduled batch of the plan, and what its check said."""

    batch: Batch
    cells: dict[str, CellNight]

    @property
    def analysis(self) -> dict[str, Any]:
        return self.batch.analysis or {}

    @cached_property  # read once a cell: a page reads it per night and cell
    def check(self) -> NightCheck:
        """The night's verdict, read from its analysis."""
        return NightCheck.load(self.batch.analysis)

    @cached_property
    def checks(self) -> dict[str, dict[str, Any]]:
        """The check of each cell, by identity."""
        return {c["identity"]: c for c in self.check.cells if "identity" in c}

    @property
    def flags(self) -> list[str]:
        """The flag texts of the cells alerted that night."""
        return [f"{cell['label']}: {text}" for cell in self.check.cells for text in _flags(cell)]

    @property
    def notified(self) -> list[dict[str, Any]]:
        return list(self.batch.notified or [])


@dataclass(frozen=True)
class CellRow:
    identity: str
    label: str
    threads: int


@dataclass
class PlanHistory:
    plan: Plan
    nights: list[Night]  # oldest first
    cells: list[CellRow] = field(default_factory=list)
    page: stored_nights.NightsPage | None = None  # where the nights shown are among all

    @cached_property
    def steps(self) -> dict[str, list[dict[str, Any]]]:
        """Each cell's steps over the successful nights shown, throughput's then latency's."""
        batches = [n.batch.pk for n in self.nights]
        return {
            cell.identity: [
                step
                for metric in (regressions.THROUGHPUT, regressions.LATENCY)
                for step in _series_steps(
                    tuple(self._series(cell.identity, metric)),
                    metric,
                    self.unit if metric is regressions.THROUGHPUT else self.latency_name,
                    tuple(batches),
                )
            ]
            for cell in self.cells
        }

    def _series(self, identity: str, metric: regressions.Metric) -> list[float | None]:
        """A cell's figure night by night; None where the night failed or did not measure it."""
        since = self.plan.baseline_from
        return [
            cell.value(metric)
            if n.batch.status == Status.DONE
            and (since is None or n.batch.created_at >= since)
            and (cell := n.cells.get(identity))
            else None
            for n in self.nights
        ]

    @property
    def unit(self) -> str:
        return next(
            (c.throughput_unit for n in self.nights for c in n.cells.values() if c.repeats), "tps"
        )

    @property
    def latency_name(self) -> str:
        return next(
            (
                c.metric_name(regressions.LATENCY)
                for n in self.nights
                for c in n.cells.values()
                if c.latency_pct is not None
            ),
            "latency",
        )

    @property
    def latest_judged(self) -> Night | None:
        """The last night whose check got to a verdict, for the summary table."""
        for night in reversed(self.nights):
            if night.check.cells:
                return night
        return None

    def chart(self, annotations: Sequence[Annotation] = ()) -> dict[str, Any]:
        """What the page's script draws: one chart per cell, a point per night, and the
        plan's `annotations` marked at their nights."""
        return {
            "unit": self.unit,
            "latency": self.latency_name,
            "nights": [
                {
                    "batch": n.batch.pk,
                    "date": timezone.localtime(n.batch.created_at).strftime("%Y-%m-%d %H:%M"),
                    "status": n.batch.status,
                    "launched_by": n.batch.launched_by,
                    # drawn as a failed night on the chart, never as a measured one
                    "failed": n.batch.status != Status.DONE,
                    "error": (n.batch.error or "").strip().split("\n")[0][:200],
                }
                for n in self.nights
            ],
            "cells": [self._cell_series(cell) for cell in self.cells],
            "annotations": self.annotations_marked(annotations),
        }

    def annotations_marked(self, annotations: Sequence[Annotation]) -> list[dict[str, Any]]:
        """The annotations within the nights shown, each at the first night at or after it
        (its index on the chart), oldest first."""
        if not self.nights:
            return []
        first, last = self.nights[0].batch.created_at, self.nights[-1].batch.created_at
        marked = []
        for note in sorted((a for a in annotations if first <= a.at <= last), key=lambda a: a.at):
            index = next(i for i, n in enumerate(self.nights) if n.batch.created_at >= note.at)
            when = timezone.localtime(note.at).strftime("%Y-%m-%d %H:%M")
            marked.append({"index": index, "at": when, "text": note.text})
        return marked

    def table(self) -> dict[str, Any]:
        """The night-by-night table, for scripts: each night (newest first) with its status,
        its verdict and flags, and every cell it measured with its figures and checks."""
        return {
            "unit": self.unit,
            "latency": self.latency_name,
            "cells": [
                {"id": c.identity, "label": c.label, "threads": c.threads, "steps": steps}
                for c, steps in self.cell_steps()
            ],
            "nights": [_night_row(night, self.cells) for night in reversed(self.nights)],
        }

    def cell_steps(self) -> list[tuple[CellRow, list[dict[str, Any]]]]:
        """Each cell with its steps as the table lists them."""
        return [
            (c, [_table_step(s, self.nights) for s in self.steps[c.identity]]) for c in self.cells
        ]

    def _cell_series(self, cell: CellRow) -> dict[str, Any]:
        throughput, latency, flags = [], [], []
        for night in self.nights:
            # a night that failed is marked as failed, not drawn with what it half measured
            done = night.batch.status == Status.DONE
            measured = night.cells.get(cell.identity) if done else None
            throughput.append(measured.throughput if measured else None)
            latency.append(measured.latency_ms if measured else None)
            flags.append("; ".join(_flags(night.checks.get(cell.identity) or {})) or None)
        return {
            "id": cell.identity,
            "label": cell.label,
            "throughput": throughput,
            "latency": latency,
            "flags": flags,
            "steps": [_chart_step(s, self.nights) for s in self.steps.get(cell.identity, [])],
        }


@lru_cache(maxsize=1024)
def _series_steps(
    series: tuple[float | None, ...],
    metric: regressions.Metric,
    name: str,
    batches: tuple[int, ...],
) -> tuple[dict[str, Any], ...]:
    """The steps of a series of finished nights, found once per web process: E-divisive
    costs about 1 ms a series of 60 nights and 8 ms of 366, and a page has 24 series. A
    new night makes a new series, so what is kept never goes stale."""
    return tuple(nightly.series_steps(series, metric, name=name, batches=batches))


def _flags(cell: dict[str, Any]) -> list[str]:
    """What an alerted cell says (regressions.CellCheck.flags, as stored): tonight against
    the band, and the new slower steps; nothing for a cell not alerted."""
    if not cell.get("flagged"):
        return []
    band = [c["text"] for c in cell.get("checks", []) if c.get("verdict") == regressions.REGRESSION]
    return band + [s["text"] for s in cell.get("steps", []) if s.get("alert")]


def _chart_step(step: dict[str, Any], nights: Sequence[Night]) -> dict[str, Any]:
    """A step as the chart marks it: at the position of its night among the shown ones."""
    index = next(i for i, n in enumerate(nights) if n.batch.pk == step["batch"])
    return {**step, "index": index}


def _table_step(step: dict[str, Any], nights: Sequence[Night]) -> dict[str, Any]:
    """A step for scripts: its night's batch and date, size with interval, direction."""
    night = next(n for n in nights if n.batch.pk == step["batch"])
    keys = ("metric", "name", "batch", "before", "after", "change_pct", "low_pct", "high_pct")
    return {
        **{k: step[k] for k in keys},
        "created_at": night.batch.created_at,
        "direction": step["direction"],
        "pvalue": step["pvalue"],
        "text": step["text"],
    }


def _night_row(night: Night, rows: Sequence[CellRow]) -> dict[str, Any]:
    checks = night.checks
    measured = [
        (row.identity, night.cells[row.identity]) for row in rows if row.identity in night.cells
    ]
    return {
        "batch": night.batch.pk,
        "created_at": night.batch.created_at,
        "launched_by": night.batch.launched_by,
        "status": night.batch.status,
        "error": night.batch.error,
        "verdict": night.check.status,
        "summary": night.check.summary or "",
        "flags": night.flags,
        "notified": night.notified,
        "cells": [
            {
                "id": identity,
                "throughput": cell.throughput,
                "latency_ms": cell.latency_ms,
                "repeats": cell.repeats,
                "verdict": checks.get(identity, {}).get("verdict"),
                "flagged": bool(checks.get(identity, {}).get("flagged")),
                "checks": checks.get(identity, {}).get("checks", []),
            }
            for identity, cell in measured
        ],
    }


def plan_history(
    *, plan: Plan, nights: int = 60, before: int | None = None, launched: str = "all"
) -> PlanHistory:
    """A page of `nights` batches of a plan launched as `launched` says (a key of
    LAUNCHED), the last ones or those before the batch `before`, with every cell's figures
    as stored with each night: a bounded number of queries, whatever the number of nights
    stored and cells."""
    if launched not in LAUNCHED:
        raise InvalidInput("launched", f"one of {', '.join(LAUNCHED)}, not {launched!r}")
    page = stored_nights.plan_nights(
        plan=plan,
        size=max(1, min(nights, MAX_NIGHTS_SHOWN)),
        before=before,
        fields=BATCH_FIELDS,
        launched=LAUNCHED[launched],
    )
    history = PlanHistory(
        plan=plan,
        nights=[Night(batch=b, cells=page.cells[b.pk]) for b in page.batches],
        page=page,
    )
    history.cells = _cell_rows(history.nights)
    return history


def _cell_rows(nights: Sequence[Night]) -> list[CellRow]:
    """Every cell seen, in matrix order; a cell whose parameters changed over the nights
    appears once per set of parameters, its label saying since when."""
    seen: dict[str, tuple[CellNight, Night]] = {}
    for night in nights:
        for identity, cell in night.cells.items():
            seen.setdefault(identity, (cell, night))
    labels = [cell.label for cell, _ in seen.values()]
    rows = []
    for identity, (cell, first) in sorted(seen.items(), key=lambda item: _matrix_order(item[1])):
        label = cell.label
        if labels.count(label) > 1:
            label += f" (since {timezone.localtime(first.batch.created_at):%Y-%m-%d %H:%M})"
        rows.append(CellRow(identity=identity, label=label, threads=cell.threads))
    return rows


def _matrix_order(seen: tuple[CellNight, Night]) -> tuple[Any, ...]:
    """Threads, then settings, then option values; numbers as numbers (500 before 1000),
    and older parameters before newer ones."""
    cell, first = seen

    def natural(values: dict[str, str]) -> tuple[tuple[str, int, float, str], ...]:
        keys = []
        for name in sorted(values):
            try:
                keys.append((name, 0, float(values[name]), ""))
            except ValueError:
                keys.append((name, 1, 0.0, values[name]))
        return tuple(keys)

    return (
        cell.threads,
        natural(cell.settings),
        natural(cell.axis_options),
        first.batch.created_at,
    )
