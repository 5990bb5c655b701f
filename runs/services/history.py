"""The nights of a scheduled plan: the regression check after each scheduled batch, and the
history its page shows.

When a scheduled batch ends (done, failed, cancelled, or a launch recorded as skipped), a
task compares each of its cells with the previous successful nights of the same plan and
looks for new steps in its series (runs/analysis/regressions.py holds the rule,
runs/analysis/nightly.py applies it), stores the verdict in Batch.analysis and tells the
plan's recipients when the night was lost (runs/services/notifications.py); alerted cells
are re-run and told by runs/services/alerts.py. The history also marks each cell's steps.

Both read each night's cells as its batch stored them when it ended (Batch.night,
runs/services/nights.py): one row a night, never the runs; the history a page of nights
at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from runs.analysis import nightly, regressions
from runs.analysis.regressions import CellNight
from runs.columns import NightCheck
from runs.models import Alert, Batch, LaunchedBy, Plan, Status
from runs.services import nights as stored_nights
from runs.services import notifications, queue

logger = logging.getLogger(__name__)

# Batches read per baseline night wanted: the cells of an edited plan skip the nights
# that measured other parameters, so the window looks further back than N batches.
LOOKBACK = 4
MAX_NIGHTS_SHOWN = 366  # a page of the history: a year of nights at most
BATCH_FIELDS = (
    "id",
    "plan_id",
    "params",
    "status",
    "launched_by",
    "created_at",
    "started_at",
    "finished_at",
    "error",
    "analysis",
    "notified",
    "night",
)


# --- after a scheduled batch ------------------------------------------------------------------


def batch_finished(*, batch: Batch) -> None:
    """Where a batch ends: a scheduled batch of a plan is checked and reported by a task,
    once what it stored is committed."""
    stored_nights.batch_night_store(batch=batch)
    if batch.launched_by not in (LaunchedBy.SCHEDULE, LaunchedBy.CONFIRM) or batch.plan_id is None:
        return  # a batch launched to confirm is judged by its alert, never as a night
    batch_id = batch.pk
    transaction.on_commit(lambda: enqueue_analyse(batch_id))


def enqueue_analyse(batch_id: int) -> None:
    try:
        queue.enqueue_analyse(batch_id)
    except Exception:
        # Called as a batch ends: a broker that is down loses the check, not the ending.
        logger.exception("batch %s: the regression check could not be queued", batch_id)


def batch_analyse(*, batch: Batch, notify: bool = True) -> dict[str, Any]:
    """Check every cell of a scheduled batch against the plan's previous successful
    nights, store the verdict in batch.analysis, and (with notify) tell the plan's
    recipients. Running it again recomputes the same verdict and sends nothing twice."""
    plan = batch.plan
    if plan is None:
        return {}
    if batch.launched_by == LaunchedBy.CONFIRM:
        return {}  # the re-run of a night's flagged cells is not a night (services/alerts.py)
    window = max(plan.history_nights, regressions.MIN_NIGHTS)
    previous = _previous_nights(batch, plan, window)
    result = nightly.analyse(
        stored_nights.nights_cells([batch])[batch.pk],
        [cells for _, cells in previous],
        threshold_pct=plan.regression_threshold_pct,
        history_nights=plan.history_nights,
        seen=_seen(batch, [b for b, _ in previous]),
    )
    analysis = {
        **result.to_dict(),
        "batch_status": batch.status,
        "analysed_at": timezone.now().isoformat(),
    }
    Batch.objects.filter(pk=batch.pk).update(analysis=analysis)
    batch.analysis = analysis
    logger.info("batch %s of plan %s: %s", batch.pk, plan.pk, result.summary)
    if notify:
        # An alerted night is told by its alert, once confirmed (runs/services/alerts.py).
        notifications.batch_notify(batch=batch)
    return analysis


def _seen(batch: Batch, previous: Sequence[Batch]) -> nightly.Seen:
    """The nights' batches, and the steps the previous night's check recorded: a step it
    had seen is not new. A check made before steps were recorded gives None."""
    last = NightCheck.load(previous[0].analysis) if previous else NightCheck()
    # A step its confirmation ruled noise is not seen: shown again, it is alerted again.
    noise = Alert.objects.filter(batch__in=previous[:1], state=Alert.State.NOISE).exists()
    recorded = {
        c["identity"]: [s for s in c["steps"] if not (noise and s.get("alert"))]
        for c in last.cells
        if "steps" in c
    }
    return nightly.Seen(batches=[batch.pk, *(b.pk for b in previous)], steps=recorded or None)


def previous_nights(*, batch: Batch) -> list[Batch]:
    """The nights a scheduled batch is judged against: the plan's successful scheduled
    batches before it (since its baseline), most recent first."""
    plan = batch.plan
    if plan is None:
        return []
    window = max(plan.history_nights, regressions.MIN_NIGHTS)
    return [b for b, _ in _previous_nights(batch, plan, window)]


def _previous_nights(
    batch: Batch, plan: Plan, window: int
) -> list[tuple[Batch, dict[str, CellNight]]]:
    """The plan's successful scheduled batches before this one, most recent first, with
    their cells as stored (one query, two more for nights not stored yet)."""
    earlier = list(
        Batch.objects.filter(
            plan=plan,
            launched_by=LaunchedBy.SCHEDULE,
            status=Status.DONE,
            created_at__lt=batch.created_at,
        )
        .filter(_since_baseline(plan))
        .order_by("-created_at", "-pk")
        .only(*BATCH_FIELDS)[: max(window * LOOKBACK, regressions.STEP_NIGHTS)]
    )
    cells = stored_nights.nights_cells(earlier)
    return [(b, cells[b.pk]) for b in earlier]


def _since_baseline(plan: Plan) -> Q:
    """The nights a plan's check may look at: those since its accepted baseline, if any."""
    return Q(created_at__gte=plan.baseline_from) if plan.baseline_from else Q()


# --- the history page -------------------------------------------------------------------------


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

    def chart(self) -> dict[str, Any]:
        """What the page's script draws: one chart per cell, a point per night."""
        return {
            "unit": self.unit,
            "latency": self.latency_name,
            "nights": [
                {
                    "batch": n.batch.pk,
                    "date": timezone.localtime(n.batch.created_at).strftime("%Y-%m-%d %H:%M"),
                    "status": n.batch.status,
                }
                for n in self.nights
            ],
            "cells": [self._cell_series(cell) for cell in self.cells],
        }

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
            measured = night.cells.get(cell.identity)
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


def plan_history(*, plan: Plan, nights: int = 60, before: int | None = None) -> PlanHistory:
    """A page of `nights` scheduled batches of a plan, the last ones or those before the
    batch `before`, with every cell's figures as stored with each night: a bounded number
    of queries, whatever the number of nights stored and cells."""
    page = stored_nights.plan_nights(
        plan=plan,
        size=max(1, min(nights, MAX_NIGHTS_SHOWN)),
        before=before,
        fields=BATCH_FIELDS,
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
