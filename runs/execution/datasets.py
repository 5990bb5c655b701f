"""Reusable data sets: prepare big sbtest tables once, not every night.

After a prepare, a marker table in the target database (`benchdash_dataset`) records the
shape of the data set: the test family, the table count and size, the options that shape
the tables, and the sysbench version that made them. A later batch whose data set has the
same shape checks that the tables are still whole (every table there, every row count
right) and skips prepare; a changed shape, a damaged set, or tables without a marker are
cleaned up and prepared again. A plan with `cleanup` off keeps its tables for the next
batch; cleanup drops the marker with the tables.

A batch's prepare and cleanup stages follow its data sets: the runs that share one form a
group (one prepare before, one cleanup after), and each stage leaves its record on the
batch (in its `stages` column), so that a batch resumed after a crash knows what is done.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone

from runs import targets
from runs.columns import BatchEnvironment
from runs.frozen import FrozenPlan
from runs.models import Batch, Run, Status, Target
from runs.sysbench.cells import REBUILD, cell_identity, item_index, rebuild_part
from runs.sysbench.command import dataset_key, dataset_reusable, family
from runs.sysbench.options import OPTIONS, SINGLE_TABLE_TESTS, is_sql_test
from runs.targets import ServerTarget

_NUMBER = re.compile(r"sbtest([0-9]+)")


@dataclass(frozen=True)
class Shape:
    """What identifies a prepared data set."""

    family: str
    tables: int
    table_size: int
    sysbench_version: str
    key: tuple[str, ...]

    def marker(self, batch_id: int | None) -> dict[str, Any]:
        return {
            "family": self.family,
            "tables_count": self.tables,
            "table_size": self.table_size,
            "sysbench_version": self.sysbench_version,
            "dataset_key": " ".join(self.key),
            "batch_id": batch_id,
            "prepared_at": timezone.now().isoformat(timespec="seconds"),
        }


@dataclass(frozen=True)
class Decision:
    """What to do before a group of runs: reuse the tables there, or prepare (after a
    cleanup of what is there, with `cleanup_options`, when that is not None)."""

    reuse: bool
    reason: str
    cleanup_options: dict[str, Any] | None = None


def shape_of(test: str, options: Mapping[str, Any], sysbench_version: str) -> Shape | None:
    """The shape of the data set a run needs; None when it has no reusable sbtest set."""
    if family(test) != "oltp" or not dataset_reusable(test):
        return None
    key = dataset_key(test, options)
    values = dict(part.split("=", 1) for part in key[1:])
    return Shape(
        family="oltp",
        tables=int(values.get("tables", OPTIONS["tables"].default or 1)),
        table_size=int(values.get("table-size", OPTIONS["table-size"].default or 0)),
        sysbench_version=sysbench_version,
        key=key,
    )


def dataset_decide(
    *,
    db: ServerTarget,
    test: str,
    options: Mapping[str, Any],
    sysbench_version: str,
    reuse_allowed: bool,
) -> Decision:
    """Whether the data set in the target database can serve `options`, else what to
    clean up before preparing. reuse_allowed is False for a plan that prepares fresh."""
    tables = db.sbtest_tables()
    marker = db.dataset_marker()
    shape = shape_of(test, options, sysbench_version)
    problem = "leftover sbtest tables" if tables else "no data set yet"
    if shape is not None and marker is not None:
        problem = _difference(shape, marker) or _damage(db, shape, tables) or ""
        if not problem and reuse_allowed:
            return Decision(reuse=True, reason=_reused(marker))
        problem = problem or "the plan prepares a fresh data set"
    cleanup = _cleanup_options(test, options, tables) if tables else None
    return Decision(reuse=False, reason=problem, cleanup_options=cleanup)


def dataset_prepared(
    *,
    db: ServerTarget,
    test: str,
    options: Mapping[str, Any],
    sysbench_version: str,
    batch_id: int,
) -> None:
    """Record the shape of the data set prepare just made, for later batches."""
    shape = shape_of(test, options, sysbench_version)
    if shape is None:
        db.dataset_forget()
    else:
        db.dataset_mark(shape.marker(batch_id))


def batch_dataset_decide(
    *,
    batch: Batch,
    options: dict[str, Any],
    test: str = "",
    fresh: bool = False,
    target: Target | None = None,
) -> Decision:
    """Whether a batch's cell may reuse the data set on its target (`target`, the batch's
    own by default), or what to clean. `test` is the group's (by default the plan's);
    `fresh`: an item of a tests axis that rebuilds its data set, whatever is there."""
    plan = FrozenPlan.from_params(batch.params)
    test = test or plan.test
    target = target or batch.target
    if not is_sql_test(test) or target is None:
        return Decision(reuse=False, reason="")  # fileio: a fresh workspace
    if plan.script is not None and plan.script.interface is not None:
        # A custom script's tables are its own: no marker says what they hold.
        return Decision(reuse=False, reason="a custom script prepares its own data set")
    with targets.connect_to(target) as db:
        decision = dataset_decide(
            db=db,
            test=test,
            options=options,
            sysbench_version=_sysbench_version(batch),
            reuse_allowed=plan.dataset_policy == "shared" and not fresh,
        )
    if fresh and not decision.reuse:
        return dataclasses.replace(decision, reason=f"rebuilt for {test}: {decision.reason}")
    return decision


def batch_dataset_prepared(
    *, batch: Batch, options: dict[str, Any], test: str = "", target: Target | None = None
) -> None:
    """Mark the data set a batch just prepared on its target (`target`, the batch's own by
    default); `test` is the group's (by default the plan's). A custom script's tables are
    its own: no marker."""
    plan = FrozenPlan.from_params(batch.params)
    test = test or plan.test
    target = target or batch.target
    own_tables = plan.script is not None and plan.script.interface is not None
    if is_sql_test(test) and target is not None and not own_tables:
        with targets.connect_to(target) as db:
            dataset_prepared(
                db=db,
                test=test,
                options=options,
                sysbench_version=_sysbench_version(batch),
                batch_id=batch.pk,
            )


def _sysbench_version(batch: Batch) -> str:
    return BatchEnvironment.load(batch.environment).sysbench_version


def dataset_removed(*, db: ServerTarget) -> None:
    """Cleanup dropped the tables: drop their marker too."""
    db.dataset_forget()


def _difference(shape: Shape, marker: Mapping[str, Any]) -> str:
    was = marker.get("dataset_key", "").split(" ")
    now = list(shape.key)
    if marker.get("family") != shape.family or was[:1] != now[:1]:
        return f"the data set there is for {marker.get('family')}, not {shape.family}"
    changed = [f"{a} (was {b.split('=', 1)[-1]})" for a, b in zip(now, was, strict=False) if a != b]
    if changed or len(was) != len(now):
        return "the data set changed: " + ", ".join(changed or now[1:])
    if marker.get("sysbench_version") != shape.sysbench_version:
        return (
            f"the data set was prepared by {marker.get('sysbench_version')}, "
            f"this load host runs {shape.sysbench_version}"
        )
    return ""


def _damage(db: ServerTarget, shape: Shape, tables: list[str]) -> str:
    expected = [f"sbtest{i}" for i in range(1, shape.tables + 1)]
    missing = sorted(set(expected) - set(tables), key=_number)
    if missing:
        return f"the data set is damaged: {', '.join(missing)} missing"
    counts = db.row_counts(expected)
    wrong = [f"{t} has {n} rows" for t, n in counts.items() if n != shape.table_size]
    if wrong:
        return f"the data set is damaged: {', '.join(sorted(wrong, key=_number))}, " + (
            f"not {shape.table_size}"
        )
    return ""


def _reused(marker: Mapping[str, Any]) -> str:
    by = f"batch {marker['batch_id']}" if marker.get("batch_id") else "an earlier batch"
    return f"reused the data set prepared by {by} at {marker.get('prepared_at')}"


def _cleanup_options(test: str, options: Mapping[str, Any], tables: list[str]) -> dict[str, Any]:
    """The options of a cleanup that drops every sbtest table there, however many."""
    highest = max((_number(t) for t in tables), default=1)
    cleanup = dict(options)
    if test not in SINGLE_TABLE_TESTS:  # those two insist on --tables=1
        cleanup["tables"] = max(int(options.get("tables", 1)), highest)
    return cleanup


def _number(table: str) -> int:
    m = _NUMBER.search(table)
    return int(m[1]) if m else 0


@dataclass
class Group:
    """Consecutive runs sharing one data set: one prepare before, one cleanup after, on
    each of its servers (a targets axis: the runs of every target, interleaved)."""

    first_position: int
    dataset: tuple[Any, ...]
    runs: list[Run] = field(default_factory=list)
    test: str = ""  # its first run's test, which prepares and cleans up the data set

    @property
    def rebuilds(self) -> bool:
        """An item of a tests axis with a data set of its own: prepared afresh."""
        return bool(self.dataset) and str(self.dataset[-1]).startswith(f"{REBUILD}=")

    @property
    def servers(self) -> list[int | None]:
        """Its runs' targets in order of their first run (None: the batch's own, on a
        batch without a targets axis): matrix.prepare_points' servers."""
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
        # Each install has its own data directory: its own data set.
        if fresh or not groups or groups[-1].dataset != key or groups[-1].install != run.install:
            groups.append(Group(first_position=run.position, dataset=key, test=test))
        groups[-1].runs.append(run)
    return [g for g in groups if has_queued_run(g) or _left_behind(batch, plan, g)]


def run_dataset(plan: FrozenPlan, run: Run, test: str) -> tuple[str, ...]:
    """The data set a run needs, as the matrix keyed it: a tests axis's item that
    rebuilds its own has a key of its own (runs/sysbench/cells.py rebuild_part)."""
    key = dataset_key(test, run.sysbench_options)
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
    """Whether the group's stage is done (on `target`, of a targets axis) and still
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
    """Keep what a prepare or cleanup did (on `target`, of a targets axis), with the
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
    `target` of each stage; none on a batch without a targets axis)."""
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
