"""The nightly check: after each scheduled batch, its cells against the plan's previous
successful nights.

When a scheduled batch ends (done, failed, cancelled, or a launch recorded as skipped), a
task compares each of its cells with the previous successful nights of the same plan and
looks for new steps in its series (runs/analysis/nightly/regressions.py holds the rule,
runs/analysis/nightly/check.py applies it), stores the verdict in Batch.analysis and tells
the plan's recipients when the night was lost (notifications.py); alerted cells are re-run
and told by alerts.py. It reads each night's cells as its batch stored them when it ended
(Batch.night, nights.py): one row a night, never the runs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from runs.analysis.nightly import check as nightly
from runs.analysis.nightly import regressions
from runs.analysis.nightly.regressions import CellNight
from runs.columns import NightCheck
from runs.models import Alert, Batch, LaunchedBy, Plan, Status
from runs.services import queue
from runs.services.nightly import nights as stored_nights
from runs.services.nightly import notifications
from runs.services.nightly.nights import BATCH_FIELDS

logger = logging.getLogger(__name__)

# Batches read per baseline night wanted: the cells of an edited plan skip the nights
# that measured other parameters, so the window looks further back than N batches.
LOOKBACK = 4


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
        # An alerted night is told by its alert, once confirmed (runs/services/nightly/alerts.py).
        notifications.batch_notify(batch=batch)
    return analysis


def _seen(batch: Batch, previous: Sequence[Batch]) -> nightly.Seen:
    """The nights' batches, and the steps the checks of the nights in the step window
    recorded, with those of the plan's alerts: a step seen once is not new again, even
    when the previous night's check did not list it (a step alerted, acknowledged or
    dismissed ten nights ago, missed by last night's search, is not alerted again). A
    check made before steps were recorded gives None.

    A step whose confirmation ruled it noise is not seen: shown again, it is alerted again."""
    window = list(previous[: regressions.STEP_NIGHTS])
    found = Alert.objects.filter(batch__in=window).only("batch_id", "state", "cells")
    noise = {a.batch_id for a in found if a.state == Alert.State.NOISE}
    recorded: dict[str, list[dict[str, Any]]] = {}
    for night in window:
        for cell in NightCheck.load(night.analysis).cells:
            if "steps" in cell:
                steps = recorded.setdefault(cell["identity"], [])
                steps += [s for s in cell["steps"] if not (night.pk in noise and s.get("alert"))]
    for alert in found:
        if alert.state != Alert.State.NOISE:
            for cell in alert.cells or []:
                recorded.setdefault(str(cell.get("identity")), []).extend(cell.get("steps", []))
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
