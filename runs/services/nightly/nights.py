"""A batch's night: each cell's figures as a plan's history reads them (the median of its
repeats: throughput, latency and its percentile, repeats counted), stored in Batch.night
when the batch ends, so that the history page, its API and the nightly check read one
row a night instead of every run of every night.

`batch_night_store` is called once as a batch ends (runs/services/nightly/history.py,
`batch_finished`). A batch that ended without it (it ended before nights were stored, or
the sweeper ended it) is computed from its runs the first time it is read, and stored
then; a batch still running is computed each time and stored never. The stored form
carries its version: a change of what a night holds bumps NIGHT_VERSION, and older
nights are computed again as they are read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import orjson
from django.db import transaction
from django.db.models import JSONField, Q, QuerySet, TextField
from django.db.models.functions import Cast

from runs.analysis.nightly import regressions
from runs.analysis.nightly.regressions import CellNight
from runs.errors import InvalidInput
from runs.frozen import FrozenPlan
from runs.models import FINISHED_STATUSES, Batch, LaunchedBy, Plan, Run, Status

logger = logging.getLogger(__name__)

NIGHT_VERSION = 1
# The fields of a night's batch that the check and the history read.
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
RUN_FIELDS = (
    "id",
    "batch_id",
    "cell_key",
    "threads",
    "target_id",
    "settings",
    "options",
    "status",
    "summary",
)


def batch_night_store(*, batch: Batch) -> None:
    """Store what a batch of a plan measured, cell by cell, as it ends (two queries)."""
    if batch.plan_id is None:
        return
    try:
        # A savepoint: a failure here must not break the transaction the ending is in.
        with transaction.atomic():
            night = stored_form(batch_cells(batch, _runs_of(batch.pk)))
            Batch.objects.filter(pk=batch.pk).update(night=night)
        batch.night = night
    except Exception:
        # A night not stored is computed from the runs when history first reads it: the
        # batch's ending must not be lost for it.
        logger.exception("batch %s: its night could not be stored", batch.pk)


def batch_cells(batch: Batch, runs: Iterable[Run]) -> dict[str, CellNight]:
    """What one batch measured, cell by cell (cells keyed by their frozen parameters)."""
    plan = FrozenPlan.from_params(batch.params)
    # A servers axis: each run's own target (as frozen at launch) in its cell's identity,
    # so that the history is per (target, cell); the first's identity is a one-target plan's.
    axis = {t.get("id"): t for t in plan.targets}
    return regressions.night_cells(
        (
            regressions.RunResult(
                cell_key=run.cell_key,
                threads=run.threads,
                settings=run.settings or {},
                options=run.options or {},
                status=run.status,
                summary=run.summary or {},
                target=axis.get(run.target_id) if axis else None,
            )
            for run in runs
        ),
        test=plan.test,
        target=plan.target,
        script=plan.script.content if plan.script else None,
        ok_status=Status.DONE,
    )


def nights_cells(batches: Sequence[Batch]) -> dict[int, dict[str, CellNight]]:
    """Each batch's cells by batch id, read from its stored night. The batches must have
    `night` and `status` loaded, and `params` for those whose night is not stored yet:
    those are computed from their runs (one query for all) and, once finished, stored
    (one more). Two queries at most, whatever the number of batches."""
    cells = {b.pk: read for b in batches if (read := _read(b.night)) is not None}
    missing = [b for b in batches if b.pk not in cells]
    if not missing:
        return cells
    runs = _runs_by_batch([b.pk for b in missing])
    finished = []
    for batch in missing:
        cells[batch.pk] = batch_cells(batch, runs.get(batch.pk, []))
        if batch.status in FINISHED_STATUSES:
            batch.night = stored_form(cells[batch.pk])
            finished.append(batch)
    Batch.objects.bulk_update(finished, ["night"], batch_size=1000)
    return cells


@dataclass(frozen=True)
class NightsPage:
    """A page of a plan's scheduled batches, oldest first, with each one's cells."""

    batches: list[Batch]
    cells: dict[int, dict[str, CellNight]]
    older: int | None = None  # `before` for the page of older nights; None: none older
    newer: int | None = None  # `before` for the page of newer nights; None: the newest page
    has_newer: bool = False


# How a plan's batches were launched, as its history may show them: scheduled nights and
# launches by hand (a confirmation re-run is its alert's, an imported log no launch).
LAUNCHES = (LaunchedBy.SCHEDULE, LaunchedBy.UI, LaunchedBy.API, LaunchedBy.CLI)


def plan_nights(
    *,
    plan: Plan,
    size: int,
    before: int | None = None,
    fields: Sequence[str],
    launched: Sequence[str] = (LaunchedBy.SCHEDULE,),
) -> NightsPage:
    """The `size` batches of `plan` launched as `launched` says (scheduled by default)
    before the batch `before` (the newest when None), with the batch `fields` and their
    cells: a bounded number of queries, whatever the number of nights stored. Raises
    InvalidInput when `before` is not such a batch of the plan."""
    scheduled = Batch.objects.filter(plan=plan, launched_by__in=list(launched))
    older = scheduled.order_by("-created_at", "-pk")
    if before is not None:
        older = older.filter(_before(_cursor(scheduled, before), before))
    batches = _read_batches(older, fields, size + 1)
    more = len(batches) > size
    batches = batches[:size][::-1]
    page = NightsPage(
        batches=batches,
        cells=nights_cells(batches),
        older=batches[0].pk if more else None,
    )
    if before is None or not batches:
        return page
    newest = batches[-1]
    newer = list(
        scheduled.filter(~_before((newest.created_at, newest.pk), newest.pk) & ~Q(pk=newest.pk))
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)[: size + 1]
    )
    return NightsPage(
        batches=page.batches,
        cells=page.cells,
        older=page.older,
        newer=newer[size] if len(newer) > size else None,
        has_newer=bool(newer),
    )


def _read_batches(query: QuerySet[Batch], fields: Sequence[str], limit: int) -> list[Batch]:
    """The first `limit` batches of `query` with `fields`, their JSON decoded by orjson: a
    night is some 16 kB of JSON (its check's verdict, above all), which the standard
    library's decoder reads at a third of orjson's speed."""
    json_fields = [f for f in fields if isinstance(Batch._meta.get_field(f), JSONField)]
    texts = {f"{name}_text": Cast(name, TextField()) for name in json_fields}
    others = [f for f in fields if f not in json_fields]
    batches = list(query.only(*others).annotate(**texts)[:limit])
    for batch in batches:
        for name in json_fields:
            setattr(batch, name, orjson.loads(getattr(batch, f"{name}_text")))
    return batches


def _cursor(scheduled: Any, before: int) -> tuple[datetime, int]:
    created = scheduled.filter(pk=before).values_list("created_at", flat=True).first()
    if created is None:
        raise InvalidInput("before", f"{before} is not a batch of this plan's history")
    return created, before


def _before(cursor: tuple[datetime, int], pk: int) -> Q:
    """Batches earlier than the cursor's, in the order of the history (created, then id)."""
    created, _ = cursor
    return Q(created_at__lt=created) | Q(created_at=created, pk__lt=pk)


def stored_form(cells: dict[str, CellNight]) -> dict[str, Any]:
    return {"version": NIGHT_VERSION, "cells": [asdict(cell) for cell in cells.values()]}


def _read(night: Any) -> dict[str, CellNight] | None:
    """The cells of a stored night; None when none is stored (or an older form is)."""
    if not isinstance(night, dict) or night.get("version") != NIGHT_VERSION:
        return None
    return {cell["identity"]: CellNight(**cell) for cell in night.get("cells", [])}


def _runs_of(batch_id: int) -> list[Run]:
    return list(Run.objects.filter(batch_id=batch_id).order_by("position").only(*RUN_FIELDS))


def _runs_by_batch(batch_ids: Sequence[int]) -> dict[int, list[Run]]:
    by_batch: dict[int, list[Run]] = {}
    for run in Run.objects.filter(batch_id__in=batch_ids).order_by("position").only(*RUN_FIELDS):
        by_batch.setdefault(run.batch_id, []).append(run)
    return by_batch
