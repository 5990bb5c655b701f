"""Whether a writing run left its data set the size it found it: the rows of its sbtest
tables counted before and after the run (runs/execution/row_counts.py), and the warning
when it changed them by more than 1 %.

A test that deletes without inserting again (sysbench 1.0.20's oltp_delete) or inserts
without deleting (oltp_insert) leaves the runs after it on the same data set measuring
another table than the one prepared: an update matching a row in a few of its tries, a
ratio that says a setting when it says the table. The count is exact (COUNT(*) per
table): an estimate (information_schema, pg_class) is off by more than the 1 % it would
have to tell. It reads every row twice per run, so a large data set is not counted.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from runs.analysis.percent import signed_pct

# Rows (tables x table size) counted exactly before and after each writing run: a
# COUNT(*) reads every row, so its time grows with the data set while the run's does not.
EXACT_LIMIT = 1_000_000
# And tables: one statement a table, before and after each run.
TABLES_LIMIT = 64
CHANGE_LIMIT_PCT = 1.0  # a change beyond this is told
TIMES = "\u00d7"  # 10,000x1 as print sets it (escaped: the linter flags look-alikes)

# The tests that only insert: the rows they add are their own work, not a data set spoiled.
INSERT_ONLY = frozenset({"oltp_insert"})

# What pairs each delete with its re-insert, in one transaction, in sysbench 1.0.20.
DELETE_INSERT = "oltp_write_only with index-updates=0 non-index-updates=0 delete-inserts=1"


@dataclass(frozen=True)
class RowCounts:
    """`Run.environment["rows"]`: its tables' rows before and after the run, with the
    data set's prepared shape; or why they were not counted (`skipped`)."""

    tables: int
    table_size: int
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    skipped: str = ""

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> RowCounts | None:
        if not isinstance(data, Mapping):
            return None
        return cls(
            tables=int(data.get("tables") or 0),
            table_size=int(data.get("table_size") or 0),
            before=_counts(data.get("before")),
            after=_counts(data.get("after")),
            skipped=str(data.get("skipped") or ""),
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"tables": self.tables, "table_size": self.table_size}
        if self.skipped:
            return {**data, "skipped": self.skipped}
        return {**data, "exact": True, "before": self.before, "after": self.after}

    def skip(self, reason: str) -> RowCounts:
        return replace(self, skipped=reason)

    @property
    def names(self) -> list[str]:
        return [f"sbtest{i}" for i in range(1, self.tables + 1)]

    @property
    def change_pct(self) -> float | None:
        """The change of the tables' total rows over the run, in percent of before; None
        when not counted both times."""
        if self.skipped or not self.before or not self.after:
            return None
        before = sum(self.before.values())
        after = sum(self.after.values())
        if before == 0:
            return 0.0 if after == 0 else float("inf")
        return 100.0 * (after - before) / before


def counting(*, tables: int, table_size: int) -> RowCounts:
    """What a writing run's tables will be counted as: skipped, with the reason, when an
    exact count would cost more than it tells."""
    counts = RowCounts(tables=tables, table_size=table_size)
    total = tables * table_size
    if tables > TABLES_LIMIT:
        return counts.skip(
            f"rows not counted: {tables:,} tables; one count a table before and after each "
            f"run, so benchdash counts up to {TABLES_LIMIT} tables"
        )
    if total > EXACT_LIMIT:
        return counts.skip(
            f"rows not counted: {_shape(counts)} = {total:,} rows; an exact count reads "
            f"every row before and after each run, so benchdash counts up to {EXACT_LIMIT:,}"
        )
    return counts


def rows_warning(test: str, counts: RowCounts, *, rebuilds: bool = False) -> str | None:
    """What to tell when a run changed its tables' rows by more than 1 %, in words a user
    can act on; None when it did not (or they were not counted). `rebuilds`: the run's
    data set is its item's own (a tests axis's `rebuild`)."""
    pct = counts.change_pct
    if pct is None or abs(pct) <= CHANGE_LIMIT_PCT or rows_fact(test, counts, rebuilds=rebuilds):
        return None
    before, after = sum(counts.before.values()), sum(counts.after.values())
    prepared = counts.tables * counts.table_size
    of = _shape(counts) if before == prepared else f"{before:,} (prepared: {_shape(counts)})"
    if after < before:
        said = f"{test} removed {before - after:,} of {of} rows ({signed_pct(pct)})"
        size = "fewer rows"
    else:
        said = f"{test} added {after - before:,} rows to {of} ({signed_pct(pct)})"
        size = "more rows"
    return f"{said}: {_consequence(size, rebuilds)}; {_remedy(after < before, rebuilds)}"


def rows_fact(test: str, counts: RowCounts, *, rebuilds: bool) -> str | None:
    """How much an insert-only run grew its tables, said as a fact where that growth is
    the test's own work and no other run measures it: its data set is prepared again
    before each of its runs (`rebuilds`). None otherwise (rows_warning speaks then)."""
    pct = counts.change_pct
    if test not in INSERT_ONLY or not rebuilds or pct is None or pct <= 0:
        return None
    before, after = sum(counts.before.values()), sum(counts.after.values())
    return (
        f"{test} added {after - before:,} rows to {_shape(counts)} ({signed_pct(pct)}), its "
        "own work: its data set is prepared again before each of its runs"
    )


def _consequence(size: str, rebuilds: bool) -> str:
    whose = "its own data set" if rebuilds else "this data set"
    return f"the runs after it on {whose} measure {size} than were prepared"


def _remedy(removed: bool, rebuilds: bool) -> str:
    if removed:
        return f"pair each delete with its re-insert ({DELETE_INSERT})" + (
            "" if rebuilds else ", or give the item rebuild"
        )
    if rebuilds:
        return "a shorter run, or a larger table-size, keeps the change within the run small"
    return "give the item rebuild, so that no other test measures the rows it added"


def _shape(counts: RowCounts) -> str:
    return f"{counts.table_size:,}{TIMES}{counts.tables}"


def _counts(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int | float)}
