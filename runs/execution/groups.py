"""A batch's data sets as its worker follows them: the runs that share one form a group
(one prepare before, one cleanup after, on each of its servers), and each stage leaves its
record on the batch (in its `stages` column), so that a batch resumed after a crash knows
what is done. Whether a data set may be reused is runs/execution/datasets.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from runs.frozen import FrozenPlan
from runs.models import Batch, Run, Status
from runs.sysbench.cells import cell_identity, item_index, rebuild_part, rebuilds
from runs.sysbench.command import dataset_key
from runs.sysbench.script_command import ScriptCommand, script_dataset_key
from runs.sysbench.script_options import ScriptInterface


@dataclass
class Group:
    """Consecutive runs sharing one data set: one prepare before, one cleanup after, on
    each of its servers (a servers axis: the runs of every target, interleaved)."""

    first_position: int
    dataset: tuple[Any, ...]
    runs: list[Run] = field(default_factory=list)
    test: str = ""  # its first run's test, which prepares and cleans up the data set

    @property
    def rebuilds(self) -> bool:
        """An item of a tests axis with a data set of its own: prepared afresh."""
        return rebuilds(self.dataset)

    @property
    def servers(self) -> list[int | None]:
        """Its runs' targets in order of their first run (None: the batch's own, on a
        batch without a servers axis): matrix.prepare_points' servers."""
        return list(dict.fromkeys(r.target_id for r in self.runs))

    def runs_on(self, target_id: int | None) -> list[Run]:
        return [r for r in self.runs if r.target_id == target_id]

    @property
    def install(self) -> str:
        return self.runs[0].install if self.runs else ""


def pending_groups(batch: Batch) -> list[Group]:
    """The groups of the batch that still have a queued run, or a data set still to
    clean up (its last cell was interrupted by a stopping worker), in execution order."""
    groups: list[Group] = []
    plan = FrozenPlan.from_params(batch.params)
    fresh = plan.dataset_policy == "fresh"
    for run in batch.runs.order_by("position"):
        test = run.test or plan.test
        key = run_dataset(plan, run, test)
        # Each install has its own data directory: its own data set. An item that rebuilds
        # gets it prepared again before each of its runs.
        if (
            fresh
            or rebuilds(key)
            or not groups
            or groups[-1].dataset != key
            or groups[-1].install != run.install
        ):
            groups.append(Group(first_position=run.position, dataset=key, test=test))
        groups[-1].runs.append(run)
    return [g for g in groups if has_queued_run(g) or _left_behind(batch, plan, g)]


def run_dataset(plan: FrozenPlan, run: Run, test: str) -> tuple[str, ...]:
    """The data set a run needs, as the matrix keyed it: a tests axis's item that
    rebuilds its own has a key of its own (runs/sysbench/cells.py rebuild_part); a custom
    script's is named by the script and its options."""
    key = dataset_key(test, run.sysbench_options)
    script = plan.script
    if key and script is not None and script.interface is not None:
        # A custom script's stages run its own prepare and cleanup, on tables of its own.
        return script_dataset_key(
            test=test,
            options=run.sysbench_options,
            script=ScriptCommand(
                path=script.entry_name,
                interface=ScriptInterface.from_json(script.interface),
                values=script.options,
            ),
        )
    if not key or not plan.tests or plan.dataset_policy == "fresh":
        return key
    identity = cell_identity(run.cell_key)
    given = identity.get("test_options")
    index = item_index(plan.tests, test, given if isinstance(given, dict) else {})
    if index is not None and plan.tests[index].get("rebuild"):
        return key + rebuild_part(index)
    return key


def needed_later(batch: Batch, group: Group) -> bool:
    """Whether a later group of the batch uses the same data set on the same install (a
    versions axis takes turns between installs): then it stays for that group to reuse."""
    if FrozenPlan.from_params(batch.params).dataset_policy == "fresh":
        return False
    return any(
        g.first_position > group.first_position
        and g.dataset == group.dataset
        and g.install == group.install
        for g in pending_groups(batch)
    )


def has_queued_run(group: Group) -> bool:
    return any(r.status == Status.QUEUED for r in group.runs)


def _left_behind(batch: Batch, plan: FrozenPlan, group: Group) -> bool:
    """Prepared and not cleaned up since (stage_done, on any of its servers), and the
    plan wants it cleaned up."""
    servers = group.servers if plan.targets else [None]
    return plan.cleanup and any(stage_done(batch, "prepare", group, s) for s in servers)


def stage_done(batch: Batch, kind: str, group: Group, target: int | None = None) -> bool:
    """Whether the group's stage is done (on `target`, of a servers axis) and still
    holds: a prepare is undone by a later cleanup (a group that an auto mode extended is
    prepared again)."""
    done = False
    for s in batch.stages:
        if s["group"] != group.first_position or not s["ok"] or s.get("target") != target:
            continue
        if s["kind"] == kind:
            done = True
        elif kind == "prepare" and s["kind"] == "cleanup":
            done = False
    return done


def stage_record(
    batch: Batch,
    kind: str,
    group: Group,
    *,
    reason: str,
    started_at: datetime,
    exit_code: int | None,
    error: str,
    output: list[str],
    target: int | None = None,
) -> None:
    """Keep what a prepare or cleanup did (on `target`, of a servers axis), with the
    last lines it printed."""
    stage = {
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
    }
    _append(batch, {**stage, "target": target} if target is not None else stage)


def stage_skipped(
    batch: Batch, kind: str, group: Group, *, reason: str, target: int | None = None
) -> None:
    """A stage that did not need to run (a data set reused), and why."""
    now = timezone.now().isoformat()
    _append(
        batch,
        {
            **({"target": target} if target is not None else {}),
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


def stage_left(batch: Batch) -> dict[str, Any] | None:
    """The prepare whose data set no cleanup dropped yet, None when there is none."""
    left = stages_left(batch)
    return left[-1] if left else None


def stages_left(batch: Batch) -> list[dict[str, Any]]:
    """The prepares whose data set no cleanup dropped yet: one per target at most (the
    `target` of each stage; none on a batch without a servers axis)."""
    left: dict[Any, dict[str, Any]] = {}
    for stage in batch.stages:
        server = stage.get("target")
        if stage["kind"] == "prepare" and stage["ok"] and not stage.get("skipped"):
            left[server] = stage
        elif stage["kind"] == "cleanup" and stage["ok"] and _same_group(stage, left.get(server)):
            left.pop(server)
    return list(left.values())


def _same_group(stage: dict[str, Any], other: dict[str, Any] | None) -> bool:
    return other is not None and stage["group"] == other["group"]


def stage_dropped_later(
    batch: Batch, prepare: dict[str, Any], *, reason: str, dropped: list[str]
) -> None:
    """A cleanup done after the batch's end, by the sweeper, of `prepare`'s data set."""
    now = timezone.now().isoformat()
    _append(
        batch,
        {
            **({"target": prepare["target"]} if "target" in prepare else {}),
            "kind": "cleanup",
            "group": prepare["group"],
            "dataset": prepare["dataset"],
            "reason": reason,
            "started_at": now,
            "finished_at": now,
            "exit_code": None,
            "ok": True,
            "error": "",
            "output": f"dropped {', '.join(dropped) or 'nothing'}",
        },
    )


def _append(batch: Batch, stage: dict[str, Any]) -> None:
    # Written again after a lost answer from the results database: never twice.
    key = (stage["kind"], stage["group"], stage["started_at"], stage.get("target"))
    kept = [
        s for s in batch.stages if (s["kind"], s["group"], s["started_at"], s.get("target")) != key
    ]
    batch.stages = [*kept, stage]
    batch.save(update_fields=["stages"])
