"""Executing a batch: prepare the data sets, run every cell in order, clean up, restore.

One worker task executes one batch. It claims the batch with a conditional update (so a
redelivered task does nothing), records the environment and the server's original
settings before the first change, then runs the queued cells in their recorded order.
Every line sysbench prints is parsed as it arrives; samples reach the database within a
second, and the batch and its running run beat a heartbeat so that the sweeper can tell a
dead worker from a long benchmark.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from runs import targets
from runs.execution import datasets, live, locks, preflight, server_settings, steps
from runs.execution.environment import batch_record_environment, run_server_changes
from runs.execution.run_results import run_fail, run_store_result, target_error_text
from runs.execution.sink import SampleSink
from runs.execution.steps import Group
from runs.execution.watch import BatchStopped, Watch
from runs.loadhosts import Executor, ExecutorError, SysbenchProcess, executor_for
from runs.models import Batch, Run, Status
from runs.sysbench.command import build_command, has_dataset
from runs.sysbench.options import ValidationError, is_sql_test
from runs.sysbench.parser import (
    OutputParser,
    SysbenchError,
)
from runs.targets import counters

logger = logging.getLogger(__name__)

TICK_S = 0.25  # how often the loop wakes up without output
SCRIPT_NAME = "script.lua"  # a plan's custom Lua script, in sysbench's private directory


class BatchAborted(Exception):
    """Nothing more of this batch can run (e.g. sysbench is missing); says why."""


@dataclass
class Outcome:
    """What follows a batch's execution, for the caller to hand on (the services enqueue
    work; execution never does)."""

    finished: bool = False  # the batch reached its final status
    requeue: bool = False  # handed back to the queue: its worker is stopping
    woken: list[int] = field(default_factory=list)  # waiting batches whose locks were freed
    error: Exception | None = None  # an internal error, logged and re-raised by the caller


def batch_execute(*, batch_id: int, worker: str) -> Outcome:
    if not _claim(batch_id, worker):
        logger.info("batch %s is not queued any more: nothing to do", batch_id)
        return Outcome()
    batch = Batch.objects.select_related("target", "load_host", "plan").get(pk=batch_id)
    assert batch.load_host is not None, "only imported batches have no load host"
    executor = executor_for(batch.load_host, settings.BENCHDASH_SYSBENCH)
    runner = BatchRunner(batch, executor)
    runner.execute()
    return runner.outcome


@transaction.atomic
def _claim(batch_id: int, worker: str) -> bool:
    """Take the batch if it is still to run and its server and load host are free."""
    batch = (
        Batch.objects.select_for_update(skip_locked=True)
        .filter(pk=batch_id, status__in=[Status.QUEUED, Status.WAITING])
        .first()
    )
    if batch is None:
        return False
    waiting_for = locks.locks_acquire(batch=batch)
    if waiting_for:
        batch.status = Status.WAITING
        batch.waiting_for = waiting_for
        batch.save(update_fields=["status", "waiting_for"])
        return False
    now = timezone.now()
    Batch.objects.filter(pk=batch_id).update(
        status=Status.RUNNING,
        worker=worker,
        heartbeat_at=now,
        started_at=Coalesce(F("started_at"), Value(now)),
        waiting_for="",
    )
    return True


class BatchRunner:
    def __init__(self, batch: Batch, executor: Executor) -> None:
        self.batch = batch
        self.executor = executor
        self.params: dict[str, Any] = batch.params
        self.test: str = self.params["test"]
        self.sql = is_sql_test(self.test)
        self._last_beat = 0.0
        self.outcome = Outcome()

    # --- the batch ------------------------------------------------------------------------

    def execute(self) -> None:
        stopped: BatchStopped | None = None
        try:
            self._preflight()
            batch_record_environment(batch=self.batch, executor=self.executor)
            for group in steps.pending_groups(self.batch):
                self._run_group(group)
        except BatchStopped as e:
            stopped = e
        except (BatchAborted, targets.TargetError, ValidationError) as e:
            self._abort(str(e) if not isinstance(e, targets.TargetError) else target_error_text(e))
        except Exception as e:
            logger.exception("batch %s failed", self.batch.pk)
            self._abort(f"internal error: {e}")
            self.outcome.error = e
        finally:
            self._restore_settings()
            self._finish(stopped)
            self._remove_workspace()

    def _preflight(self) -> None:
        """The first step of every batch, resumed ones too: a host or a server may have
        changed since the launch. A failure ends the batch before anything changed."""
        report = preflight.batch_preflight(batch=self.batch, executor=self.executor)
        checked = {**report.to_dict(), "at": timezone.now().isoformat()}
        self.batch.environment = {**self.batch.environment, "preflight": checked}
        self.batch.save(update_fields=["environment"])
        if not report.ok:
            raise BatchAborted("preflight failed: " + "\n".join(report.failures))

    def _run_group(self, group: Group) -> None:
        owns_data = has_dataset(self.test) and self.params["dataset_policy"] != "existing"
        if owns_data and not self._prepare(group):
            return
        try:
            for run in group.runs:
                if run.status == Status.QUEUED:
                    self._run_cell(run)
        except BatchStopped as e:
            # A cancelled batch still drops its data set; a stopping worker leaves it for
            # the batch to go on with when it resumes.
            if e.status == Status.CANCELLED and owns_data and self.params["cleanup"]:
                self._cleanup(group)
            raise
        if owns_data and self.params["cleanup"]:
            self._cleanup(group)

    def _prepare(self, group: Group) -> bool:
        if (
            steps.step_done(self.batch, "prepare", group)
            and self.params["dataset_policy"] == "shared"
        ):
            return True  # prepared before a crash; the data set is still there
        options = group.runs[0].options
        decision = self._dataset_decision(options)
        if decision.reuse:
            steps.step_skipped(self.batch, "prepare", group, reason=decision.reason)
            return True
        if decision.cleanup_options is not None:
            self._sysbench_step("cleanup", group, decision.cleanup_options, reason=decision.reason)
        error = self._sysbench_step("prepare", group, options, reason=decision.reason)
        if error is None:
            self._dataset_prepared(options)
            return True
        for run in group.runs:
            if run.status == Status.QUEUED:
                run_fail(run, f"prepare failed: {error.message}", error.hint, error.kind)
        return False

    def _sysbench_step(
        self, phase: str, group: Group, options: dict[str, Any], reason: str = ""
    ) -> SysbenchError | None:
        """Run prepare or cleanup, record it on the batch, and return its first error."""
        self._set_batch_status(Status.PREPARING if phase == "prepare" else Status.RUNNING)
        started = timezone.now()
        parser = OutputParser()
        errors: list[SysbenchError] = []
        lines: list[str] = []
        process = self._start(phase, options)
        watch = Watch(self.batch.pk) if phase == "prepare" else None
        stop: BatchStopped | None = None
        for line in process.lines(TICK_S):
            if line is not None:
                lines.append(line)
                errors += [e for e in parser.feed(line) if isinstance(e, SysbenchError)]
            self._beat()
            stop = watch.check() if watch else None
            if stop is not None:
                process.kill()
                errors.append(SysbenchError("stopped", stop.reason, "", None))
                break
        exit_code = process.wait()
        errors += parser.finish(exit_code).errors
        if exit_code != 0 and not errors:
            errors.append(
                SysbenchError("other", f"sysbench {phase} exited with code {exit_code}", "", None)
            )
        steps.step_record(
            self.batch,
            phase,
            group,
            reason=reason,
            started_at=started,
            exit_code=exit_code,
            error=errors[0].message if errors else "",
            output=lines[-50:],
        )
        self._set_batch_status(Status.RUNNING)
        if stop is not None:
            raise stop
        return errors[0] if errors else None

    # --- one run ---------------------------------------------------------------------------

    def _run_cell(self, run: Run) -> None:
        now = timezone.now()
        run.status = Status.RUNNING
        run.started_at = now
        run.heartbeat_at = now
        run.save(update_fields=["status", "started_at", "heartbeat_at"])
        live.publish_start(run)
        try:
            run.verified_settings = self._apply_settings(run)
        except targets.TargetError as e:
            run_fail(
                run,
                e.message,
                e.hint,
                "setting" if isinstance(e, targets.SettingNotApplied) else "target",
            )
            return
        process = self._start("run", run.options)
        run.pgid = process.pgid
        run.argv = process.command.argv
        sampler = counters.sampler_start(run=run, batch=self.batch)
        run.save(update_fields=["verified_settings", "environment", "pgid", "argv"])
        try:
            self._stream(run, process)
        finally:
            counters.sampler_stop(sampler, run=run)

    def _apply_settings(self, run: Run) -> dict[str, str]:
        if not run.settings:
            return {}
        with self._target() as db:
            applied: targets.Applied = db.apply(run.settings)
        run.environment = run_server_changes(batch=self.batch, variables=applied.variables)
        return applied.verified

    def _stream(self, run: Run, process: SysbenchProcess) -> None:
        parser = OutputParser()
        sink = SampleSink(run, warmup_s=float(self.params["warmup_s"]))
        watch = Watch(self.batch.pk, run.expected_duration_s)
        stop: BatchStopped | None = None
        for line in process.lines(TICK_S):
            if line is not None:
                sink.add_line(line)
                for event in parser.feed(line):
                    sink.add(event)
            if sink.due():
                sink.flush()
            self._beat(run)
            stop = watch.check()
            if stop is not None:
                process.kill()
                break
        exit_code = process.wait()
        sink.flush(final=True)
        result = parser.finish(exit_code)
        run_store_result(run, result, warmup_s=float(self.params["warmup_s"]), stop=stop)
        if stop is not None and stop.status != Status.FAILED:
            raise stop

    # --- helpers ---------------------------------------------------------------------------

    def _start(self, phase: str, options: dict[str, Any]) -> SysbenchProcess:
        connection = (
            targets.connection_of(self.batch.target) if self.sql and self.batch.target else None
        )
        script = self.params.get("script")  # a custom Lua script, frozen at launch

        def make(config_path: str) -> Any:
            return build_command(
                test=self.test,
                phase=phase,
                # build_command keeps only the data-set options for prepare and cleanup
                options=options,
                connection=connection,
                config_path=config_path,
                executable=self.executor.sysbench,
                script_path=_next_to(config_path, SCRIPT_NAME) if script else None,
            )

        try:
            files = {SCRIPT_NAME: script["content"]} if script else None
            workspace = self._workspace()
            if workspace:
                return self.executor.start(make, files=files, cwd=workspace)  # type: ignore[call-arg]
            return self.executor.start(make, files=files)
        except ExecutorError as e:
            raise BatchAborted(str(e)) from None

    # --- data sets and the load host's working directory ------------------------------------

    def _dataset_decision(self, options: dict[str, Any]) -> datasets.Decision:
        if not self.sql or self.batch.target is None:
            return datasets.Decision(reuse=False, reason="")  # fileio: a fresh workspace
        with self._target() as db:
            return datasets.dataset_decide(
                db=db,
                test=self.test,
                options=options,
                sysbench_version=self._sysbench_version(),
                reuse_allowed=self.params["dataset_policy"] == "shared",
            )

    def _dataset_prepared(self, options: dict[str, Any]) -> None:
        if self.sql and self.batch.target is not None:
            with self._target() as db:
                datasets.dataset_prepared(
                    db=db,
                    test=self.test,
                    options=options,
                    sysbench_version=self._sysbench_version(),
                    batch_id=self.batch.pk,
                )

    def _cleanup(self, group: Group) -> None:
        error = self._sysbench_step("cleanup", group, group.runs[0].options)
        if error is None and self.sql and self.batch.target is not None:
            with self._target() as db:
                datasets.dataset_removed(db=db)

    def _sysbench_version(self) -> str:
        load_host = self.batch.environment.get("load_host") or {}
        return str(load_host.get("sysbench_version") or "unknown")

    def _workspace(self) -> str | None:
        """fileio's files live in a directory of the batch on the load host, from prepare
        through the runs to cleanup; other tests run in sysbench's private directory."""
        if self.test != "fileio":
            return None
        workspace = getattr(self.executor, "workspace", None)
        if workspace is None:
            raise BatchAborted(
                f"fileio needs a working directory on load host '{self.executor.host_name}', "
                "which this kind of load host does not offer yet"
            )
        return str(workspace(f"batch-{self.batch.pk}"))

    def _remove_workspace(self) -> None:
        # A batch handed back to the queue keeps its files for when it resumes.
        if self.test != "fileio" or self.batch.status == Status.QUEUED:
            return
        remove = getattr(self.executor, "remove_workspace", None)
        if remove is not None:
            remove(self._workspace())

    def _target(self) -> Any:
        assert self.batch.target is not None
        return targets.connect_to(self.batch.target)

    def _beat(self, run: Run | None = None) -> None:
        now = time.monotonic()
        if now - self._last_beat < settings.BENCHDASH_HEARTBEAT_SECONDS:
            return
        self._last_beat = now
        stamp = timezone.now()
        Batch.objects.filter(pk=self.batch.pk).update(heartbeat_at=stamp)
        if run is not None:
            Run.objects.filter(pk=run.pk).update(heartbeat_at=stamp)

    def _set_batch_status(self, status: str) -> None:
        self.batch.status = status
        Batch.objects.filter(pk=self.batch.pk).update(status=status, heartbeat_at=timezone.now())

    def _abort(self, reason: str) -> None:
        """Stop the batch: the run in progress fails, the remaining ones are skipped."""
        self.batch.error = reason
        for run in self.batch.runs.filter(status__in=[Status.RUNNING, Status.PREPARING]):
            run_fail(run, reason, "", "batch")
        self._skip_remaining(f"skipped: {reason}")

    def _skip_remaining(self, reason: str) -> None:
        self.batch.runs.filter(status=Status.QUEUED).update(status=Status.SKIPPED, error=reason)

    def _restore_settings(self) -> None:
        self.batch.refresh_from_db(fields=["original_settings"])
        try:
            server_settings.batch_restore_settings(batch=self.batch)
        except targets.TargetError as e:
            originals = self.batch.original_settings
            message = f"could not restore the server's settings {originals}: {e.message}"
            self.batch.error = "\n".join(filter(None, [self.batch.error, message]))
            logger.error("batch %s: %s", self.batch.pk, message)

    def _finish(self, stopped: BatchStopped | None) -> None:
        batch = self.batch
        if stopped is not None and stopped.status == Status.INTERRUPTED:
            # The worker is stopping: hand the batch back; a worker that comes back goes on
            # from the next unfinished cell.
            batch.status = Status.QUEUED
            batch.warnings = [*batch.warnings, stopped.reason]
            batch.save(update_fields=["status", "warnings", "error"])
            self.outcome.woken = locks.locks_release(batch=batch)
            self.outcome.requeue = True
            return
        if stopped is not None:
            self._skip_remaining(f"skipped: {stopped.reason}")
            batch.status = stopped.status
        else:
            statuses = set(batch.runs.values_list("status", flat=True))
            failed = bool(batch.error) or Status.FAILED in statuses
            batch.status = Status.FAILED if failed else Status.DONE
        batch.finished_at = timezone.now()
        batch.save(update_fields=["status", "finished_at", "error"])
        self.outcome.woken = locks.locks_release(batch=batch)
        self.outcome.finished = True


def _next_to(config_path: str, name: str) -> str:
    """A file of the executor's private directory: next to the config file."""
    return os.path.join(os.path.dirname(config_path), name)
