"""Reusable data sets: prepare big sbtest tables once, not every night.

After a prepare, a marker table in the target database (`benchdash_dataset`) records the
shape of the data set: the test family, the table count and size, the options that shape
the tables, and the sysbench version that made them. A later batch whose data set has the
same shape checks that the tables are still whole (every table there, every row count
right) and skips prepare; a changed shape, a damaged set, or tables without a marker are
cleaned up and prepared again. A plan with `cleanup` off keeps its tables for the next
batch; cleanup drops the marker with the tables.

A batch's groups of runs sharing a data set, and the records of their stages, are in
runs/execution/groups.py.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from runs import targets
from runs.columns import BatchEnvironment
from runs.frozen import FrozenPlan
from runs.models import Batch, Target
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
