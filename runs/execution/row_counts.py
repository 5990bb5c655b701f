"""The rows of a writing run's tables, counted on its target before and after the run
(the rule and the words: runs/analysis/row_counts.py): kept on the run's environment
(`rows`), and a warning on the run, and once per test on its batch, when the run changed
them by more than 1 %.

Only the tests that change data on sysbench's own oltp tables are counted: a reader leaves
them as they were, a custom script's tables are its own (no shape says what they held).
"""

from __future__ import annotations

from runs import targets
from runs.analysis.row_counts import RowCounts, counting, rows_fact, rows_warning
from runs.execution.datasets import shape_of
from runs.execution.groups import run_dataset
from runs.frozen import FrozenPlan
from runs.models import Batch, Run, Target
from runs.sysbench.cells import cell_identity, item_index, rebuilds
from runs.sysbench.command import changes_data

KEY = "rows"  # in Run.environment


def rows_before(*, batch: Batch, run: Run, target: Target | None) -> None:
    """Count the run's tables now, before it starts, when its test changes them; on
    `run.environment` (saved with the run's start)."""
    counts = _to_count(batch, run, target)
    if counts is None:
        return
    if not counts.skipped:
        assert target is not None
        counts = _counted(counts, target, before=True)
    run.environment = {**run.environment, KEY: counts.to_json()}


def rows_after(*, batch: Batch, run: Run, target: Target | None) -> bool:
    """Count the run's tables again, now it has ended, and warn, on the run and on its
    batch, when the run changed them by more than 1 % (saved with the run's result).
    Whether the batch's warnings changed (the caller saves them)."""
    counts = RowCounts.load(run.environment.get(KEY))
    if counts is None or counts.skipped or target is None:
        return False
    counts = _counted(counts, target, before=False)
    run.environment = {**run.environment, KEY: counts.to_json()}
    plan = FrozenPlan.from_params(batch.params)
    test = run.test or plan.test
    own = rebuilds(run_dataset(plan, run, test))
    fact = rows_fact(test, counts, rebuilds=own)
    if fact:  # said on the run (its page, its API's environment.rows), not a warning
        run.environment = {**run.environment, KEY: {**counts.to_json(), "said": fact}}
    warning = rows_warning(test, counts, rebuilds=own)
    if not warning:
        return False
    run.warnings = [*run.warnings, warning]  # a test's name begins it, as written
    return _warn_batch(batch, plan, run, warning)


def _to_count(batch: Batch, run: Run, target: Target | None) -> RowCounts | None:
    """What the run's tables are to be counted as; None when the run is not counted."""
    plan = FrozenPlan.from_params(batch.params)
    test = run.test or plan.test
    own_tables = plan.script is not None and plan.script.interface is not None
    if target is None or own_tables or not changes_data(test):
        return None
    shape = shape_of(test, run.sysbench_options, "")
    if shape is None:  # not an oltp data set: fileio, bulk_insert
        return None
    counts = counting(tables=shape.tables, table_size=shape.table_size)
    if plan.dataset_policy == "fresh" and not counts.skipped:
        # Each run prepares its own: what it changes, no other run measures.
        return counts.skip("rows not counted: every run of this plan prepares its data set")
    return counts


def _counted(counts: RowCounts, target: Target, *, before: bool) -> RowCounts:
    when = "before" if before else "after"
    try:
        with targets.connect_to(target) as db:
            found = db.row_counts(counts.names)
    except targets.TargetError as e:
        return counts.skip(f"rows not counted {when} the run: {e.message}")
    missing = sorted(set(counts.names) - set(found))
    if missing:
        return counts.skip(f"rows not counted {when} the run: {', '.join(missing)} missing")
    if before:
        return RowCounts(counts.tables, counts.table_size, before=found)
    return RowCounts(counts.tables, counts.table_size, before=counts.before, after=found)


def _warn_batch(batch: Batch, plan: FrozenPlan, run: Run, warning: str) -> bool:
    """Once per test item: the first run that changed its rows speaks for it on the batch
    (its results page, report and API); every run says it in its own warnings."""
    who = _item_name(plan, run)
    if any(w.startswith(f"{who}, run ") for w in batch.warnings):
        return False
    batch.warnings = [*batch.warnings, f"{who}, run {run.position + 1}: {warning}"]
    return True


def _item_name(plan: FrozenPlan, run: Run) -> str:
    """The run's item of the tests axis as its row in the relative table names it."""
    test = run.test or plan.test
    given = cell_identity(run.cell_key).get("test_options")
    index = item_index(plan.tests, test, given if isinstance(given, dict) else {})
    name = plan.tests[index].get("name") if index is not None else None
    return f"{name} ({test})" if name else test
