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
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone

from runs import targets
from runs.errors import InvalidInput
from runs.execution import auto, datasets, locks
from runs.execution.cell_run import CellRun
from runs.execution.datasets import Group
from runs.execution.environment import batch_record_environment
from runs.execution.heartbeat import BatchStopped
from runs.execution.multihost.cell_hosts import (
    Dispatch,
)
from runs.execution.outages import handover
from runs.execution.outages.host_wait import LoadHostGone, host_unreachable, load_host_wait
from runs.execution.outages.outage_buffer import ResultsUnreachable
from runs.execution.outages.target_wait import TargetGone, failure_kind, target_wait
from runs.execution.preflight import batch as preflight
from runs.execution.run_results import run_fail, target_error_text
from runs.execution.sysbench_process import (
    BatchAborted,
    follow_stage,
    supervised,
)
from runs.loadhosts import Executor, executor_for
from runs.models import Batch, Status
from runs.sysbench.command import has_dataset
from runs.sysbench.errors import error_code
from runs.sysbench.parser import SysbenchError

logger = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What follows a batch's execution, for the caller to hand on (the services enqueue
    work; execution never does)."""

    finished: bool = False  # the batch reached its final status
    requeue: bool = False  # handed back to the queue: its worker is stopping
    woken: list[int] = field(default_factory=list)  # waiting batches whose locks were freed
    error: Exception | None = None  # an internal error, logged and re-raised by the caller


def batch_execute(*, batch_id: int, worker: str, dispatch: Dispatch | None = None) -> Outcome:
    if not locks.batch_claim(batch_id=batch_id, worker=worker):
        logger.info("batch %s is not queued any more: nothing to do", batch_id)
        return Outcome()
    batch = Batch.objects.select_related("target", "load_host", "plan").get(pk=batch_id)
    assert batch.load_host is not None, "only imported batches have no load host"
    executor = executor_for(batch.load_host, settings.BENCHDASH_SYSBENCH)
    runner = BatchRunner(batch, executor, dispatch)
    runner.execute()
    return runner.outcome


class BatchRunner(CellRun):
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
                for group in datasets.pending_groups(self.batch):
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
        owns_data = has_dataset(self.test) and self.plan.dataset_policy != "existing"
        if not datasets.has_queued_run(group):
            # Its last cell was interrupted by a stopping worker: only the cleanup is left.
            if owns_data and self.plan.cleanup:
                self._cleanup(group)
            return
        if owns_data and not self._prepare(group):
            return
        try:
            for run in group.runs:
                if run.status == Status.QUEUED:
                    self._run_cell(run)
                    if run.status == Status.FAILED:
                        self._after_failure(run.error_kind, run.error, pgid=run.pgid)
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
        if owns_data and self.plan.cleanup:
            self._cleanup(group)

    def _prepare(self, group: Group) -> bool:
        if (
            datasets.stage_done(self.batch, "prepare", group)
            and self.plan.dataset_policy == "shared"
        ):
            return True  # prepared before a crash; the data set is still there
        options = group.runs[0].sysbench_options
        decision = datasets.batch_dataset_decide(batch=self.batch, options=options)
        if decision.reuse:
            datasets.stage_skipped(self.batch, "prepare", group, reason=decision.reason)
            return True
        if decision.cleanup_options is not None:
            self._dataset_stage("cleanup", group, decision.cleanup_options, reason=decision.reason)
        error = self._dataset_stage("prepare", group, options, reason=decision.reason)
        if error is None:
            datasets.batch_dataset_prepared(batch=self.batch, options=options)
            return True
        for run in group.runs:
            if run.status == Status.QUEUED:
                run_fail(run, f"prepare failed: {error.message}", error.hint, error.kind)
        self._after_failure(error.kind, error.message)
        return False

    def _after_failure(self, kind: str, message: str, pgid: int | None = None) -> None:
        """A target or a load host gone away is waited for before the next cell; an error
        every cell would repeat stops the batch here, with its reason."""
        if kind == "load_host":
            line = next((x for x in message.splitlines() if host_unreachable(x)), kind)
            self._wait_for_load_host(line, pgid)
            return
        verdict = failure_kind(kind, message)
        # The line with the server's error code says the most (sysbench adds several).
        lines = message.splitlines() or [kind]
        line = next((x for x in lines if error_code(x) is not None), lines[0])
        if verdict == "repeating":
            raise TargetGone(f"{line} (every remaining cell would fail the same way)")
        if verdict == "unreachable" and self.sql and self.batch.target is not None:
            target_wait(batch=self.batch, pulse=self.pulse, error=line)

    def _dataset_stage(
        self, phase: str, group: Group, options: dict[str, Any], reason: str = ""
    ) -> SysbenchError | None:
        """Run prepare or cleanup, record it on the batch, and return its first error."""
        self._set_batch_status(Status.PREPARING if phase == "prepare" else Status.RUNNING)
        started = timezone.now()
        # sysbench's private directory is recorded on the group's first run meanwhile
        with supervised(self.starter.start(phase, options), group.runs[0], self.store) as process:
            followed = follow_stage(
                batch_id=self.batch.pk,
                process=process,
                pulse=self.pulse,
                stoppable=phase == "prepare",
            )
        exit_code = followed.result.exit_code
        errors = followed.errors + followed.result.errors
        if exit_code != 0 and not errors:
            errors.append(
                SysbenchError("other", f"sysbench {phase} exited with code {exit_code}", "", None)
            )
        self.store.ensure(
            lambda: datasets.stage_record(
                self.batch,
                phase,
                group,
                reason=reason,
                started_at=started,
                exit_code=exit_code,
                error=errors[0].message if errors else "",
                output=followed.lines[-50:],
            )
        )
        self._set_batch_status(Status.RUNNING)
        if followed.stop is not None:
            raise followed.stop
        return errors[0] if errors else None

    # --- data sets and the load host's working directory ------------------------------------

    def _cleanup(self, group: Group) -> None:
        error = self._dataset_stage("cleanup", group, group.runs[0].sysbench_options)
        if error is None and self.sql and self.batch.target is not None:
            with self._target() as db:
                datasets.dataset_removed(db=db)

    def _cleanup_at_the_end(self, group: Group) -> None:
        """The cleanup of a batch that ends on an error: sysbench's on the load host, or,
        when the host is gone, the tables dropped on the target from this worker."""
        self.starter.host_lost = None  # waited for once already: no second wait
        try:
            self._cleanup(group)
            return
        except (BatchAborted, LoadHostGone) as e:
            reason = f"the load host is gone ({e}): dropped from the worker"
        except targets.TargetError as e:
            logger.warning("batch %s: cleanup failed: %s", self.batch.pk, e)
            return
        if not self.sql or self.batch.target is None:
            return
        started = timezone.now()
        try:
            with self._target() as db:
                dropped = db.dataset_drop()
        except targets.TargetError as e:
            error, dropped = f"left on the target: {target_error_text(e)}", []
        else:
            error = ""
        self.store.ensure(
            lambda: datasets.stage_record(
                self.batch,
                "cleanup",
                group,
                reason=reason,
                started_at=started,
                exit_code=None,
                error=error,
                output=[f"dropped {', '.join(dropped) or 'nothing'}"],
            )
        )

    def _wait_for_load_host(self, error: str, pgid: int | None = None) -> None:
        load_host_wait(
            batch=self.batch, pulse=self.pulse, executor=self.executor, error=error, pgid=pgid
        )

    def _set_batch_status(self, status: str) -> None:
        self.batch.status = status
        self.store.ensure(
            lambda: Batch.objects.filter(pk=self.batch.pk).update(
                status=status, heartbeat_at=timezone.now()
            )
        )

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
        fields = ["status", "error", "warnings", "settings_restored_at"]
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
                statuses = set(batch.runs.values_list("status", flat=True))
                failed = bool(batch.error) or Status.FAILED in statuses
                batch.status = Status.FAILED if failed else Status.DONE
                if failed and not batch.error:
                    batch.error = _runs_failed(batch)
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


def _runs_failed(batch: Batch) -> str:
    """Why a batch whose every step went through ends failed: its failed runs, named."""
    runs = batch.runs.order_by("position")
    failed = [r for r in runs if r.status == Status.FAILED]
    first = failed[0]
    line = (first.error.splitlines() or [first.error_kind or "failed"])[0]
    # named by its id, as its page and the API show it, not by its place in the batch
    named = f"run {first.pk} ({first.label})"
    return f"{len(failed)} of {len(runs)} runs failed; the first, {named}: {line}"
