"""A batch's groups of runs sharing a data set, as its runner works through them: on which
servers each group runs (every target of a servers axis, else the batch's own), the
prepare, check and cleanup stages on each of them, and what a failed cell or stage means
for the cells after it. runs/execution/runner.py drives the batch; this is its data-set
half, and runs/execution/cell_run.py its cells.
"""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from runs import targets
from runs.execution import datasets, groups
from runs.execution.cell_run import CellRun
from runs.execution.groups import Group
from runs.execution.outages.host_wait import LoadHostGone, host_unreachable, load_host_wait
from runs.execution.outages.target_wait import TargetGone, failure_kind, target_wait
from runs.execution.run_results import run_fail, target_error_text
from runs.execution.stream.sysbench_process import BatchAborted, follow_stage, supervised
from runs.models import Batch, Run, Status, Target
from runs.sysbench.errors import error_code
from runs.sysbench.parser import SysbenchError

logger = logging.getLogger(__name__)


class GroupRun(CellRun):
    """The data-set side of a batch's runner."""

    # --- a group's servers: each target of a servers axis, else the batch's own (None) ----

    def _servers(self, group: Group) -> list[int | None]:
        return group.servers if len(self.targets) > 1 else [None]

    def _server(self, key: int | None) -> Target | None:
        return self.targets.get(key, self.batch.target) if key is not None else self.batch.target

    def _runs_on(self, group: Group, key: int | None) -> list[Run]:
        return group.runs_on(key) if key is not None else group.runs

    def _prepared_servers(self, group: Group) -> list[int | None]:
        """Where a cleanup is due: every server of a servers axis whose prepare went
        through (or found its data set there); the batch's own server always."""
        if len(self.targets) < 2:
            return [None]
        return [k for k in group.servers if groups.stage_done(self.batch, "prepare", group, k)]

    def _prepare(self, group: Group, key: int | None = None) -> bool:
        if (
            groups.stage_done(self.batch, "prepare", group, key)
            and self.plan.dataset_policy == "shared"
        ):
            return True  # prepared before a crash; the data set is still there
        runs = self._runs_on(group, key)
        target = self._server(key)
        options = runs[0].sysbench_options
        decision = datasets.batch_dataset_decide(
            batch=self.batch,
            options=options,
            test=group.test,
            fresh=group.rebuilds,
            target=target,
        )
        if decision.reuse:
            groups.stage_skipped(self.batch, "prepare", group, reason=decision.reason, target=key)
            return True
        if decision.cleanup_options is not None:
            self._dataset_stage(
                "cleanup", group, decision.cleanup_options, reason=decision.reason, key=key
            )
        error = self._dataset_stage("prepare", group, options, reason=decision.reason, key=key)
        if error is None:
            datasets.batch_dataset_prepared(
                batch=self.batch, options=options, test=group.test, target=target
            )
            return True
        where = f" on {target.name}" if key is not None and target is not None else ""
        for run in runs:
            if run.status == Status.QUEUED:
                run_fail(run, f"prepare failed{where}: {error.message}", error.hint, error.kind)
        self._after_failure(error.kind, error.message, target=target)
        return False

    def _after_failure(
        self, kind: str, message: str, pgid: int | None = None, target: Target | None = None
    ) -> None:
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
        target = target or self.batch.target
        if verdict == "unreachable" and self.sql and target is not None:
            target_wait(batch=self.batch, pulse=self.pulse, error=line, target=target)

    def _dataset_stage(
        self,
        phase: str,
        group: Group,
        options: dict[str, Any],
        reason: str = "",
        key: int | None = None,
        kind: str = "",
    ) -> SysbenchError | None:
        """Run prepare or cleanup on the server `key` (a target of a servers axis, None:
        the batch's own), record it on the batch, and return its first error."""
        self._set_batch_status(Status.PREPARING if phase == "prepare" else Status.RUNNING)
        started = timezone.now()
        holder = self._runs_on(group, key)[0]
        process = self.starter.start(phase, options, test=group.test, target=self._server(key))
        # sysbench's private directory is recorded on the server's first run meanwhile
        with supervised(process, holder, self.store) as process:
            followed = follow_stage(
                batch_id=self.batch.pk,
                process=process,
                pulse=self.pulse,
                # a cancel ends a prepare or a warm-up at once; a cleanup runs to its end
                stoppable=phase == "prepare" or kind == "warmup",
            )
        exit_code = followed.result.exit_code
        errors = followed.errors + followed.result.errors
        if exit_code != 0 and not errors:
            errors.append(
                SysbenchError("other", f"sysbench {phase} exited with code {exit_code}", "", None)
            )
        self.store.ensure(
            lambda: groups.stage_record(
                self.batch,
                kind or phase,
                group,
                reason=reason,
                started_at=started,
                exit_code=exit_code,
                error=errors[0].message if errors else "",
                output=followed.lines[-50:],
                target=key,
            )
        )
        self._set_batch_status(Status.RUNNING)
        if followed.stop is not None:
            raise followed.stop
        return errors[0] if errors else None

    # --- data sets and the load host's working directory ------------------------------------

    def _cleanup(self, group: Group) -> None:
        for key in self._prepared_servers(group):
            options = self._runs_on(group, key)[0].sysbench_options
            error = self._dataset_stage("cleanup", group, options, key=key)
            target = self._server(key)
            if error is None and self.sql and target is not None:
                with self._target(target) as db:
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
        for key in self._prepared_servers(group):
            self._drop_from_worker(group, key, reason)

    def _drop_from_worker(self, group: Group, key: int | None, reason: str) -> None:
        target = self._server(key)
        if not self.sql or target is None:
            return
        started = timezone.now()
        try:
            with self._target(target) as db:
                dropped = db.dataset_drop()
        except targets.TargetError as e:
            error, dropped = f"left on the target: {target_error_text(e)}", []
        else:
            error = ""
        self.store.ensure(
            lambda: groups.stage_record(
                self.batch,
                "cleanup",
                group,
                reason=reason,
                started_at=started,
                exit_code=None,
                error=error,
                output=[f"dropped {', '.join(dropped) or 'nothing'}"],
                target=key,
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
