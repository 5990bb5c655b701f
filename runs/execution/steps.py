"""The prepare and cleanup steps of a batch: which runs share a data set (a group: one
prepare before, one cleanup after), and the record each step leaves on the batch."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from runs.frozen import FrozenPlan
from runs.models import Batch, Run, Status
from runs.sysbench.command import dataset_key


@dataclass
class Group:
    """Consecutive runs sharing one data set: one prepare before, one cleanup after."""

    first_position: int
    dataset: tuple[Any, ...]
    runs: list[Run] = field(default_factory=list)


def pending_groups(batch: Batch) -> list[Group]:
    """The groups of the batch that still have a queued run, in execution order."""
    groups: list[Group] = []
    plan = FrozenPlan.from_params(batch.params)
    test = plan.test
    fresh = plan.dataset_policy == "fresh"
    for run in batch.runs.order_by("position"):
        key = dataset_key(test, run.options)
        if fresh or not groups or groups[-1].dataset != key:
            groups.append(Group(first_position=run.position, dataset=key))
        groups[-1].runs.append(run)
    return [g for g in groups if any(r.status == Status.QUEUED for r in g.runs)]


def step_done(batch: Batch, kind: str, group: Group) -> bool:
    """Whether the group's step is done and still holds: a prepare is undone by a later
    cleanup (a group that an auto mode extended is prepared again)."""
    done = False
    for s in batch.steps:
        if s["group"] != group.first_position or not s["ok"]:
            continue
        if s["kind"] == kind:
            done = True
        elif kind == "prepare" and s["kind"] == "cleanup":
            done = False
    return done


def step_record(
    batch: Batch,
    kind: str,
    group: Group,
    *,
    reason: str,
    started_at: datetime,
    exit_code: int | None,
    error: str,
    output: list[str],
) -> None:
    """Keep what a prepare or cleanup did, with the last lines it printed."""
    _append(
        batch,
        {
            "kind": kind,
            "group": group.first_position,
            "dataset": list(group.dataset),
            "reason": reason,
            "started_at": started_at.isoformat(),
            "finished_at": timezone.now().isoformat(),
            "exit_code": exit_code,
            "ok": not error,
            "error": error,
            "output": "\n".join(output),
        },
    )


def step_skipped(batch: Batch, kind: str, group: Group, *, reason: str) -> None:
    """A step that did not need to run (a data set reused), and why."""
    now = timezone.now().isoformat()
    _append(
        batch,
        {
            "kind": kind,
            "group": group.first_position,
            "dataset": list(group.dataset),
            "reason": reason,
            "started_at": now,
            "finished_at": now,
            "exit_code": None,
            "ok": True,
            "skipped": True,
            "error": "",
            "output": "",
        },
    )


def _append(batch: Batch, step: dict[str, Any]) -> None:
    # Written again after a lost answer from the results database: never twice.
    key = (step["kind"], step["group"], step["started_at"])
    kept = [s for s in batch.steps if (s["kind"], s["group"], s["started_at"]) != key]
    batch.steps = [*kept, step]
    batch.save(update_fields=["steps"])
