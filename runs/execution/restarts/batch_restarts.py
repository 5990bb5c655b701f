"""The restarts of a batch with a servers axis: one `Restarts` per target, each with its
own state in `Batch.put_back[str(target id)]`, chosen by the run's target (`Run.target`,
else the batch's own). Cells still interleave across the targets round by round; each
target restarts only when its own next cell needs something else than it runs. At the
batch's end every target benchdash changed gets its original back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from runs.execution.restarts.restarter import Restarts, Show, Tick
from runs.execution.server_targets import batch_targets
from runs.models import Batch, Run, Target


class BatchRestarts:
    """The restarts of each of a batch's targets, as the runner asks for them."""

    def __init__(self, batch: Batch, *, tick: Tick, show: Show, save: Callable[[], None]) -> None:
        self.batch = batch
        servers: list[Target | None] = [*batch_targets(batch)] or [None]
        self.each: dict[int | None, Restarts] = {
            (t.pk if t is not None else None): Restarts(
                batch, target=t, tick=tick, show=show, save=save
            )
            for t in servers
        }
        self.last = self.of(None)  # the one the last cell went through (its warm-up)

    def of(self, run: Run | None) -> Restarts:
        """The restarts of the run's server (the batch's own for older rows)."""
        key = run.target_id if run is not None else None
        if key not in self.each:
            key = self.batch.target_id
        return self.each.get(key) or next(iter(self.each.values()))

    @property
    def warm_s(self) -> int:
        return self.last.warm_s

    def verified(self, run: Run) -> dict[str, str]:
        """The restart-only settings the run's server showed after its last restart."""
        return self.of(run).verified

    def before_cell(self, run: Run, *, note: bool = True) -> str:
        """The run's server restarted when it runs something else: "" or why the cell
        may not run (Restarts.before_cell)."""
        self.last = self.of(run)
        return self.last.before_cell(run, note=note)

    def needs_warmup(self) -> bool:
        return self.last.needs_warmup()

    def put_back(self, reason: str) -> str:
        """Every changed target's original back, each tried whatever the others did; ""
        or what could not be put back, one line per target."""
        return put_back_each(self.each.values(), reason, named=len(self.each) > 1)


def put_back_each(each: Iterable[Restarts], reason: str, *, named: bool) -> str:
    """Each server's original back, each tried whatever the others did."""
    problems = []
    for restarts in each:
        problem = restarts.put_back(reason)
        if problem and named and restarts.target is not None:
            problem = f"{restarts.target.name}: {problem}"
        if problem:
            problems.append(problem)
    return "\n".join(problems)
