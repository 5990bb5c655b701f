"""Running one cell of a batch: its settings applied and verified, sysbench started on
its load host (or on every load host of the cell), followed to its end with the machines'
host metrics and the server's counters, and its result stored. BatchRunner (runner.py)
runs the batch around it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from runs import targets
from runs.execution import environment, row_counts, server_targets
from runs.execution.host_metrics import (
    HostMetricsSampler,
    host_metrics_clock,
    host_metrics_start,
    host_metrics_stop,
    host_metrics_summary,
)
from runs.execution.multihost.cell_hosts import (
    Dispatch,
    HostsFollowed,
    batch_load_hosts,
    cell_parts,
    follow_hosts,
    hosts_set_result,
)
from runs.execution.outages.outage_buffer import OutageBuffer, ResultsUnreachable
from runs.execution.outages.target_wait import show_waiting, target_wait, unreachable
from runs.execution.restarts.batch_restarts import BatchRestarts
from runs.execution.restarts.restarter import dynamic_settings
from runs.execution.run_results import (
    RESULT_FIELDS,
    run_fail,
    run_name_server_gone,
    run_set_result,
)
from runs.execution.stream import live
from runs.execution.stream.heartbeat import Pulse, Watch
from runs.execution.stream.sink import SampleSink
from runs.execution.stream.sysbench_process import (
    BatchAborted,
    Followed,
    Starter,
    follow_run,
    supervised,
)
from runs.frozen import FrozenPlan
from runs.loadhosts import Executor
from runs.models import Batch, Run, Status, Target
from runs.sysbench.options import is_sql_test
from runs.targets import counters

logger = logging.getLogger(__name__)


class CellRun:
    """The state a batch's execution keeps, and how it runs one cell with it."""

    def __init__(self, batch: Batch, executor: Executor, dispatch: Dispatch | None = None) -> None:
        self.batch = batch
        self.executor = executor
        self.hosts = batch_load_hosts(batch)  # more than one: each cell from all of them
        self.dispatch = dispatch
        self.starter = Starter(batch, executor)
        self.plan = FrozenPlan.from_params(batch.params)
        self.test = self.plan.test
        self.sql = is_sql_test(self.test)
        self.store = OutageBuffer()
        self.pulse = Pulse(batch.pk, self.store)
        self.results_lost: ResultsUnreachable | None = None
        # The servers axis: each run measures its own target, the batch's own first.
        self.targets = {t.pk: t for t in server_targets.batch_targets(batch)}
        # The running cell, when the results database went away for good at its end.
        self.held: tuple[Run, SampleSink] | None = None
        self.restarts = BatchRestarts(  # each target's own, for a servers axis
            batch, tick=self._restart_tick, show=self._restart_show, save=self._restart_save
        )

    # --- one run ---------------------------------------------------------------------------

    def _run_cell(self, run: Run) -> None:
        now = timezone.now()
        run.status = Status.RUNNING
        run.started_at = now
        run.heartbeat_at = now
        self.store.ensure(lambda: run.save(update_fields=["status", "started_at", "heartbeat_at"]))
        live.publish_start(run)
        target = self.target_of(run)
        run.environment = {**run.environment, **server_targets.run_server(self.batch, target)}
        verified = self._settings_for(run)
        if verified is None:
            return
        run.verified_settings = verified
        row_counts.rows_before(batch=self.batch, run=run, target=target)
        outages = len(self.store.outages)
        machines = host_metrics_start(
            batch=self.batch,
            load_hosts=self.hosts,
            store=self.store,
            beat=lambda: self.pulse.tick(Watch(self.batch.pk)) is not None,
            target=target,
        )
        try:
            if len(self.hosts) > 1:
                self._run_cell_on_hosts(run, outages, machines)
            else:
                self._run_cell_on_host(run, outages, machines)
        finally:
            host_metrics_stop(machines)

    def _run_cell_on_host(
        self, run: Run, outages: int, machines: HostMetricsSampler | None
    ) -> None:
        with supervised(
            self.starter.start(
                "run",
                run.sysbench_options,
                test=self.starter.test_of(run),
                target=self.target_of(run),
            ),
            run,
            self.store,
        ) as process:
            host_metrics_clock(machines, process.pgid)  # sysbench's own process: its CPU
            run.pgid = process.pgid
            run.argv = process.command.argv
            sampler = counters.sampler_start(run=run, batch=self.batch, target=self.target_of(run))
            try:
                self.store.ensure(
                    lambda: run.save(
                        update_fields=["verified_settings", "environment", "pgid", "argv"]
                    )
                )
                self._stream(
                    run,
                    outages,
                    lambda sink: follow_run(
                        run=run, process=process, sink=sink, sampler=sampler, pulse=self.pulse
                    ),
                    sampler,
                    machines,
                )
            finally:
                counters.sampler_stop(sampler)

    def _run_cell_on_hosts(
        self, run: Run, outages: int, machines: HostMetricsSampler | None
    ) -> None:
        """The cell from every load host at once (runs/execution/multihost/cell_hosts.py)."""
        assert self.dispatch is not None, "a cell from several hosts needs its drivers"
        dispatch = self.dispatch
        parts = cell_parts(run, self.hosts, self.plan.load_split)
        host_metrics_clock(machines)  # the hosts' drivers start sysbench together, now
        sampler = counters.sampler_start(run=run, batch=self.batch, target=self.target_of(run))
        try:
            self.store.ensure(lambda: run.save(update_fields=["verified_settings", "environment"]))
            self._stream(
                run,
                outages,
                lambda sink: follow_hosts(
                    run=run,
                    parts=parts,
                    dispatch=dispatch,
                    sink=sink,
                    sampler=sampler,
                    pulse=self.pulse,
                ),
                sampler,
                machines,
            )
        finally:
            counters.sampler_stop(sampler)

    def _settings_for(self, run: Run, *, waited: bool = False) -> dict[str, str] | None:
        """The run's settings applied and verified, once more after waiting for a target
        that went away; None when the run failed on them."""
        try:
            return self._apply_settings(run)
        except targets.TargetError as e:
            target = self.target_of(run)
            if not waited and unreachable(e.message) and target is not None:
                target_wait(batch=self.batch, pulse=self.pulse, error=e.message, target=target)
                return self._settings_for(run, waited=True)
            kind = "setting" if isinstance(e, targets.SettingNotApplied) else "target"
            run_fail(run, e.message, e.hint, kind)
            return None

    def _apply_settings(self, run: Run) -> dict[str, str]:
        """The run's settings applied and read back, with its config's (the run's own
        settings win: they come after the config's lines); what it runs on recorded."""
        restarted = {n: v for n, v in self.restarts.verified(run).items() if n in run.settings}
        target = self.target_of(run)
        dynamic = dynamic_settings(target, run.settings)
        sql = is_sql_test(self.starter.test_of(run))
        if target is None or not (sql or dynamic):
            return restarted
        with self._target(target) as db:
            applied = db.apply(dynamic).verified if dynamic else {}
            configured = environment.run_record_server(
                batch=self.batch, run=run, target=target, db=db, config_text=self._config(run)
            )
        return {**configured, **restarted, **applied}

    def _config(self, run: Run) -> str:
        configs = self.plan.servers.get("configs") or []
        return next((str(c["text"]) for c in configs if c.get("label") == run.config), "")

    # --- restarts (runs/execution/restarts/) ---------------------------------------------

    def _restart_tick(self) -> None:
        stop = self.pulse.tick(Watch(self.batch.pk))
        if stop is not None:
            raise stop

    def _restart_show(self, text: str) -> None:
        show_waiting(self.batch, self.pulse, text)

    def _restart_save(self) -> None:
        batch = self.batch
        self.store.ensure(
            lambda: Batch.objects.filter(pk=batch.pk).update(
                put_back=batch.put_back, stages=batch.stages
            )
        )

    def _stream(
        self,
        run: Run,
        outages: int,
        follow: Callable[[SampleSink], Followed | HostsFollowed],
        sampler: counters.CounterSampler | None,
        machines: HostMetricsSampler | None = None,
    ) -> None:
        """Follow the running cell to its end through `follow`, then store its result."""
        warmup_s = float(self.plan.warmup_s)
        sink = SampleSink(run, warmup_s=warmup_s, store=self.store)
        sink.host_metrics = machines
        followed = follow(sink)
        sink.add_host_rows(host_metrics_stop(machines))
        stop = followed.stop
        results_lost = stop is not None and stop.kind == "results_db"
        if results_lost:
            self._restore_settings()  # now: the target is there, the results database not
        run_set_result(run, followed.result, warmup_s=warmup_s, stop=stop)
        if stop is None and is_sql_test(self.plan.test):
            run_name_server_gone(run, followed.result, self.batch.target)
        if isinstance(followed, HostsFollowed):
            hosts_set_result(run, followed)
        counters.sampler_summary(sampler, run=run)
        warned = stop is None and row_counts.rows_after(
            batch=self.batch, run=run, target=self.target_of(run)
        )
        # Still away after that stop: wait for it a while longer, to say what happened.
        wait_s = 3 * self.store.limit_s if results_lost else None
        warnings = list(run.warnings)
        try:
            sink.flush(final=True, wait_s=wait_s)
            self.store.ensure(
                lambda: host_metrics_summary(machines, run=run, warmup_s=warmup_s), wait_s
            )
            # Told once the database is back, with the outage's real length; after what
            # the host metrics' summary added (a missing host, a busy start).
            run.warnings = [
                *run.warnings,
                *(o.describe() for o in self.store.outages[outages:]),
                *sink.warnings(),
            ]
            self.store.ensure(lambda: run.save(update_fields=RESULT_FIELDS), wait_s)
            if warned:
                self.store.ensure(lambda: self.batch.save(update_fields=["warnings"]), wait_s)
        except ResultsUnreachable:
            run.warnings = warnings  # the outage is told by the sweeper, with its length
            self.held = (run, sink)  # handed to Redis when the worker gives up
            raise
        live.publish_status(run)
        if results_lost:
            raise BatchAborted(run.error)
        if stop is not None and stop.status != Status.FAILED:
            raise stop

    def target_of(self, run: Run) -> Target | None:
        """The server the run measures (the batch's own on older rows)."""
        return server_targets.run_target(run, self.batch, self.targets)

    def _target(self, target: Target | None = None) -> Any:
        target = target or self.batch.target
        assert target is not None
        return targets.connect_to(target)

    def _restore_settings(self) -> None:
        """The server's original settings back, even while the results database is away
        (they are in memory); recorded with the batch's end."""
        self.store.attempt(
            lambda: self.batch.refresh_from_db(fields=["original_settings", "put_back"])
        )
        try:
            if environment.settings_put_back(batch=self.batch):
                self.batch.settings_restored_at = timezone.now()
        except targets.TargetError as e:
            originals = self.batch.original_settings
            message = f"could not restore the server's settings {originals}: {e.message}"
            self.batch.error = "\n".join(filter(None, [self.batch.error, message]))
            logger.error("batch %s: %s", self.batch.pk, message)
