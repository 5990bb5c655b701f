"""Executing a batch: prepare the data sets, run every cell in order, clean up, restore.

One worker task executes one batch. It claims the batch with a conditional update (so a
redelivered task does nothing), records the environment and the server's original
settings before the first change, then runs the queued cells in their recorded order.
Every line sysbench prints is parsed and published live as it arrives; samples, counter
readings and raw log reach the database in bulk with the heartbeat, which tells the
sweeper a live worker from a dead one and asks whether the batch was cancelled
(heartbeat.py). The results database may go away for a while
(outage_buffer.py), and so may the target (target_wait.py): the batch waits for them,
bounded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone

from runs import targets
from runs.analysis.auto.rate import QUEUE_FULL
from runs.errors import InvalidInput
from runs.execution import auto, groups, locks
from runs.execution.environment import batch_record_environment
from runs.execution.group_run import GroupRun
from runs.execution.groups import Group
from runs.execution.multihost.cell_hosts import (
    Dispatch,
)
from runs.execution.outages import handover
from runs.execution.outages.host_wait import LoadHostGone
from runs.execution.outages.outage_buffer import ResultsUnreachable
from runs.execution.outages.target_wait import TargetGone
from runs.execution.preflight import batch as preflight
from runs.execution.restarts.processes import RestartFailed
from runs.execution.run_results import run_fail, target_error_text
from runs.execution.stream.heartbeat import BatchStopped
from runs.execution.stream.sysbench_process import (
    BatchAborted,
)
from runs.loadhosts import Executor, executor_for
from runs.models import Batch, Run, Status
from runs.sysbench.command import has_dataset

logger = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What follows a batch's execution, for the caller to hand on (the services enqueue
    work; execution never does)."""

    finished: bool = False  # the batch reached its final status
    requeue: bool = False  # handed back to the queue: its worker is stopping
    woken: list[int] = field(default_factory=list)  # waiting batches whose locks were freed
    error: Exception | None = None  # an internal error, logged and re-raised by the caller


def batch_execute(
    *,
    batch_id: int,
    worker: str,
    dispatch: Dispatch | None = None,
    put_back_first: Callable[[Batch], list[str]] | None = None,
) -> Outcome:
    """`put_back_first`: once the batch holds its servers, before it reads their
    originals, puts back what earlier batches left on them; what the batch says of it."""
    if not locks.batch_claim(batch_id=batch_id, worker=worker):
        logger.info("batch %s is not queued any more: nothing to do", batch_id)
        return Outcome()
    batch = Batch.objects.select_related("target", "load_host", "plan").get(pk=batch_id)
    if put_back_first is not None and "load_host" not in batch.environment:
        try:
            said = put_back_first(batch)
        except Exception:  # the batch goes on: its own preflight tells a server away
            logger.exception("batch %s: what earlier batches left not put back", batch_id)
            said = []
        if said:
            batch.warnings = [*batch.warnings, *said]
            batch.save(update_fields=["warnings"])
    assert batch.load_host is not None, "only imported batches have no load host"
    executor = executor_for(batch.load_host, settings.BENCHDASH_SYSBENCH)
    runner = BatchRunner(batch, executor, dispatch)
    runner.execute()
    return runner.outcome


class BatchRunner(GroupRun):
    """A batch from its preflight to its end: its groups, their data sets, its cells (run
    by CellRun), its auto modes' extra runs, the settings put back, its ending."""

    def __init__(self, batch: Batch, executor: Executor, dispatch: Dispatch | None = None) -> None:
        super().__init__(batch, executor, dispatch)
        self.outcome = Outcome()
        self.starter.host_lost = self._wait_for_load_host

    # --- the batch ------------------------------------------------------------------------

    def execute(self) -> None:
        stopped: BatchStopped | None = None
        try:
            self._preflight()
            batch_record_environment(batch=self.batch, executor=self.executor)
            while True:
                for group in groups.pending_groups(self.batch):
                    self._run_group(group)
                if not auto.batch_extend(batch=self.batch):  # auto modes add runs
                    break
        except BatchStopped as e:
            stopped = e
        except ResultsUnreachable as e:
            self.results_lost = e
        except (BatchAborted, TargetGone, LoadHostGone, targets.TargetError, InvalidInput) as e:
            self._abort(str(e) if not isinstance(e, targets.TargetError) else target_error_text(e))
        except Exception as e:
            logger.exception("batch %s failed", self.batch.pk)
            self._abort(f"internal error: {e}")
            self.outcome.error = e
        finally:
            self._put_back_servers()
            self._restore_settings()
            if self.results_lost is None:
                self._finish(stopped)
            else:
                self._give_up(self.results_lost)
            self.starter.remove_workspace()

    def _preflight(self) -> None:
        """The first check of every batch, resumed ones too: a host or a server may have
        changed since the launch. A failure ends the batch before anything changed."""
        report = preflight.batch_preflight(batch=self.batch, executor=self.executor)
        checked = {**report.to_dict(), "at": timezone.now().isoformat()}
        self.batch.environment = {**self.batch.environment, "preflight": checked}
        self.batch.save(update_fields=["environment"])
        if not report.ok:
            raise BatchAborted("preflight failed: " + "\n".join(report.failures))

    def _run_group(self, group: Group) -> None:
        owns_data = has_dataset(group.test or self.test) and self.plan.dataset_policy != "existing"
        if not groups.has_queued_run(group):
            # Its last cell was interrupted by a stopping worker: only the cleanup is left.
            if owns_data and self.plan.cleanup:
                self._cleanup(group)
            return
        # A servers axis: the data set is prepared on each target before the group's first
        # cell, so that no prepare runs between two measured cells; each server started
        # with the group's install before its data set is prepared.
        prepared = []
        for key in self._servers(group):
            self._restart_before_prepare(group, key)  # a start that fails fails its cell
            if owns_data and self._prepare(group, key):
                prepared.append(key)
        if owns_data and not prepared:
            return
        try:
            for run in group.runs:
                if run.status == Status.QUEUED and self._restart_for(run, group=group):
                    self._run_cell(run)
                    if run.status == Status.FAILED:
                        self._after_failure(
                            run.error_kind, run.error, pgid=run.pgid, target=self.target_of(run)
                        )
        except BatchStopped as e:
            # A cancelled batch still drops its data set; a stopping worker leaves it for
            # the batch to go on with when it resumes.
            if e.status == Status.CANCELLED and owns_data and self.plan.cleanup:
                self._cleanup(group)
            raise
        except (BatchAborted, TargetGone, LoadHostGone):
            # An ending batch leaves no data set behind, even when its load host is gone.
            if owns_data and self.plan.cleanup:
                self._cleanup_at_the_end(group)
            raise
        if owns_data and self.starter.has_command("check"):
            # A custom script's own consistency check (sysbench-tpcc's), on the data set
            # the runs left: recorded as a stage, with its output.
            self._dataset_stage("check", group, group.runs[0].sysbench_options)
        if owns_data and self.plan.cleanup and not groups.needed_later(self.batch, group):
            self._cleanup(group)

    # --- restarts (runs/execution/restarts/) -----------------------------------------------

    def _restart_before_prepare(self, group: Group, key: int | None) -> None:
        """The server `key` started with the group's install (and its first cell's
        config) before its data set is prepared."""
        queued = [r for r in self._runs_on(group, key) if r.status == Status.QUEUED]
        if queued:
            self._restart_for(queued[0], note=False)

    def _restart_for(self, run: Run, *, note: bool = True, group: Group | None = None) -> bool:
        """The server restarted for the run when it needs another install, config or
        restart-only value, then warmed up (after_restart "warm"); False: the run failed."""
        try:
            error = self.restarts.before_cell(run, note=note)
        except RestartFailed as e:  # the original did not come back either
            raise BatchAborted(f"the server did not come back with its original config: {e}") from e
        if error:
            run_fail(
                run, error, "the server's own line; see the batch's log of restarts", "restart"
            )
            return False
        if group is not None and self.restarts.needs_warmup():
            warm = {**run.sysbench_options, "time": self.restarts.warm_s}
            key = run.target_id if len(self.targets) > 1 else None  # on the run's server
            self._dataset_stage(
                "run", group, warm, reason="warm-up after a restart", kind="warmup", key=key
            )
        return True

    def _put_back_servers(self) -> None:
        error = self.restarts.put_back("the batch's end")
        if error:
            self.batch.error = "\n".join(filter(None, [self.batch.error, error]))

    def _abort(self, reason: str) -> None:
        """Stop the batch: the run in progress fails, the remaining ones are skipped."""
        self.batch.error = reason
        for run in self.batch.runs.filter(status__in=[Status.RUNNING, Status.PREPARING]):
            run_fail(run, reason, "", "batch")
        self._skip_remaining(f"skipped: {reason}")

    def _skip_remaining(self, reason: str) -> None:
        self.batch.runs.filter(status=Status.QUEUED).update(status=Status.SKIPPED, error=reason)

    def _finish(self, stopped: BatchStopped | None) -> None:
        batch = self.batch
        batch.warnings = [*batch.warnings, *self.store.warnings()]
        fields = ["status", "error", "warnings", "settings_restored_at", "put_back"]
        if stopped is not None and stopped.status == Status.INTERRUPTED:
            # The worker is stopping: hand the batch back; a worker that comes back goes on
            # from the next unfinished cell.
            batch.status = Status.QUEUED
            batch.warnings.append(stopped.reason)
        else:
            if stopped is not None:
                self._skip_remaining(f"skipped: {stopped.reason}")
                batch.status = stopped.status
            else:
                runs_failed, overflowed = _failed_runs(batch, "rate" in self.plan.auto)
                failed = bool(batch.error) or bool(runs_failed)
                batch.status = Status.FAILED if failed else Status.DONE
                if failed and not batch.error:
                    batch.error = _runs_failed(batch, runs_failed)
                if overflowed:
                    batch.warnings.append(
                        f"{overflowed} runs of the rate search ended when sysbench's event "
                        "queue overflowed: their rates were far past what the server held"
                    )
            batch.finished_at = timezone.now()
            fields.append("finished_at")
        self.store.ensure(lambda: batch.save(update_fields=fields))
        self.outcome.woken = self.store.ensure(lambda: locks.locks_release(batch=batch))
        self.outcome.requeue = batch.status == Status.QUEUED
        self.outcome.finished = not self.outcome.requeue

    def _give_up(self, lost: ResultsUnreachable) -> None:
        """The results database did not come back: what the worker holds goes to Redis
        with the outage, for the sweeper to store and end the batch with (handover.py)."""
        handed = handover.handover_leave(batch=self.batch, store=self.store, held=self.held)
        restored = "restored" if self.batch.settings_restored_at else "not restored"
        held = "what it held handed to Redis" if handed else "Redis did not take what it held"
        logger.error("batch %s: given up, %s: %s; settings %s", self.batch.pk, held, lost, restored)


def _failed_runs(batch: Batch, rate_search: bool) -> tuple[list[Run], int]:
    """The batch's failed runs, and how many it does not count as failed: a rate search's
    tries that sysbench gave up on because its event queue overflowed. A search tries
    rates until one fails; one far past the load fails so, and that is its answer (not
    held: runs/analysis/auto/rate.py), not a failure of the batch."""
    failed = list(batch.runs.filter(status=Status.FAILED).order_by("position"))
    if not rate_search:
        return failed, 0
    counted = [r for r in failed if QUEUE_FULL not in r.error]
    return counted, len(failed) - len(counted)


def _runs_failed(batch: Batch, failed: list[Run]) -> str:
    """Why a batch whose every step went through ends failed: its failed runs, named."""
    first = failed[0]
    line = (first.error.splitlines() or [first.error_kind or "failed"])[0]
    # named by its id, as its page and the API show it, not by its place in the batch
    named = f"run {first.pk} ({first.label})"
    return f"{len(failed)} of {batch.runs.count()} runs failed; the first, {named}: {line}"
