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
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Concat
from django.utils import timezone

from runs import counters, datasets, history, hosts, live, locks, preflight, services, targets
from runs.executors import Executor, ExecutorError, SysbenchProcess, executor_for
from runs.models import Batch, Run, Sample, Status
from runs.summary import summarise
from runs.sysbench.command import build_command, dataset_key, has_dataset
from runs.sysbench.options import ValidationError, is_sql_test
from runs.sysbench.parser import (
    IntervalSample,
    OutputParser,
    ParseResult,
    QueueSample,
    SysbenchError,
)

logger = logging.getLogger(__name__)

TICK_S = 0.25  # how often the loop wakes up without output
FLUSH_S = 0.5  # samples are written at most this long after their line
# The raw log is appended less often: each append rewrites the whole stored text, and the
# lines already reach viewers live. A crash loses at most this much of the raw log (never
# a sample).
RAW_LOG_FLUSH_S = 5.0
SCRIPT_NAME = "script.lua"  # a plan's custom Lua script, in sysbench's private directory


# Set when the worker is asked to stop (SIGTERM on a deploy): the running benchmark is
# stopped and the batch handed back to the queue, to go on when a worker is back.
WORKER_STOPPING = threading.Event()


class BatchAborted(Exception):
    """Nothing more of this batch can run (e.g. sysbench is missing); says why."""


class BatchStopped(Exception):
    """The batch stops early on purpose: cancelled by a user, or its worker is stopping."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def batch_execute(*, batch_id: int, worker: str) -> None:
    if not _claim(batch_id, worker):
        logger.info("batch %s is not queued any more: nothing to do", batch_id)
        return
    batch = Batch.objects.select_related("target", "load_host", "plan").get(pk=batch_id)
    assert batch.load_host is not None, "only imported batches have no load host"
    executor = executor_for(batch.load_host, settings.BENCHDASH_SYSBENCH)
    BatchRunner(batch, executor).execute()


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


@dataclass
class Group:
    """Consecutive runs sharing one data set: one prepare before, one cleanup after."""

    first_position: int
    dataset: tuple[Any, ...]
    runs: list[Run] = field(default_factory=list)


class BatchRunner:
    def __init__(self, batch: Batch, executor: Executor) -> None:
        self.batch = batch
        self.executor = executor
        self.params: dict[str, Any] = batch.params
        self.test: str = self.params["test"]
        self.sql = is_sql_test(self.test)
        self._last_beat = 0.0

    # --- the batch ------------------------------------------------------------------------

    def execute(self) -> None:
        stopped: BatchStopped | None = None
        try:
            self._preflight()
            self._record_environment()
            for group in self._pending_groups():
                self._run_group(group)
        except BatchStopped as e:
            stopped = e
        except (BatchAborted, targets.TargetError, ValidationError) as e:
            self._abort(str(e) if not isinstance(e, targets.TargetError) else _target_text(e))
        except Exception as e:
            logger.exception("batch %s failed", self.batch.pk)
            self._abort(f"internal error: {e}")
            raise
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

    def _record_environment(self) -> None:
        batch = self.batch
        if "load_host" in batch.environment:
            return  # a resumed batch keeps what was recorded before its first change
        environment: dict[str, Any] = {**batch.environment, "load_host": self.executor.facts()}
        originals: dict[str, str] | None = None
        if self.sql and batch.target is not None:
            with self._target() as db:
                server = db.server_info()
                environment["server"] = {
                    "version": server.version,
                    "variables": server.variables,
                    **server.details,  # PostgreSQL: every pg_settings row
                }
                batch.warnings = [*batch.warnings, *self._server_warnings(server)]
                originals = db.originals(self.params["server_settings"])
        if batch.target is not None:
            environment.update(self._server_host_environment(batch.target))
        batch.environment = environment
        batch.original_settings = originals
        batch.save(update_fields=["environment", "original_settings", "warnings"])

    def _server_host_environment(self, target: Any) -> dict[str, Any]:
        """The database server's own facts, when it has an SSH host, and its cores and
        disks for the `cores * 2 + disks` reference line."""
        facts, problem = hosts.server_host_facts(target=target)
        if problem and problem not in self.batch.warnings:
            self.batch.warnings = [*self.batch.warnings, problem]
        environment: dict[str, Any] = {"reference": hosts.server_reference(target, facts)}
        if facts is not None:
            environment["server_host"] = facts
        return environment

    def _server_warnings(self, server: targets.ServerInfo) -> list[str]:
        max_threads = max(self.batch.runs.values_list("threads", flat=True))
        warnings = services.server_warnings(server, self.params["server_settings"], max_threads)
        return [w for w in warnings if w not in self.batch.warnings]

    def _pending_groups(self) -> list[Group]:
        groups: list[Group] = []
        fresh = self.params["dataset_policy"] == "fresh"
        for run in self.batch.runs.order_by("position"):
            key = dataset_key(self.test, run.options)
            if fresh or not groups or groups[-1].dataset != key:
                groups.append(Group(first_position=run.position, dataset=key))
            groups[-1].runs.append(run)
        return [g for g in groups if any(r.status == Status.QUEUED for r in g.runs)]

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
        if self._step_done("prepare", group) and self.params["dataset_policy"] == "shared":
            return True  # prepared before a crash; the data set is still there
        options = group.runs[0].options
        decision = self._dataset_decision(options)
        if decision.reuse:
            self._record_skipped_step("prepare", group, decision.reason)
            return True
        if decision.cleanup_options is not None:
            self._sysbench_step("cleanup", group, decision.cleanup_options, reason=decision.reason)
        error = self._sysbench_step("prepare", group, options, reason=decision.reason)
        if error is None:
            self._dataset_prepared(options)
            return True
        for run in group.runs:
            if run.status == Status.QUEUED:
                _fail(run, f"prepare failed: {error.message}", error.hint, error.kind)
        return False

    def _step_done(self, kind: str, group: Group) -> bool:
        return any(
            s["kind"] == kind and s["group"] == group.first_position and s["ok"]
            for s in self.batch.steps
        )

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
        step = {
            "kind": phase,
            "group": group.first_position,
            "dataset": list(group.dataset),
            "reason": reason,
            "started_at": started.isoformat(),
            "finished_at": timezone.now().isoformat(),
            "exit_code": exit_code,
            "ok": not errors,
            "error": errors[0].message if errors else "",
            "output": "\n".join(lines[-50:]),
        }
        self.batch.steps = [*self.batch.steps, step]
        self.batch.save(update_fields=["steps"])
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
            _fail(
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
        run.save(update_fields=["verified_settings", "pgid", "argv"])
        try:
            self._stream(run, process)
        finally:
            counters.sampler_stop(sampler, run=run)

    def _apply_settings(self, run: Run) -> dict[str, str]:
        if not run.settings:
            return {}
        with self._target() as db:
            return db.apply(run.settings)

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
        _store_result(run, result, warmup_s=float(self.params["warmup_s"]), stop=stop)
        if stop is not None and stop.status != Status.FAILED:
            raise stop

    # --- helpers ---------------------------------------------------------------------------

    def _start(self, phase: str, options: dict[str, Any]) -> SysbenchProcess:
        connection = self.batch.target.connection() if self.sql and self.batch.target else None
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

    def _record_skipped_step(self, phase: str, group: Group, reason: str) -> None:
        now = timezone.now().isoformat()
        step = {
            "kind": phase,
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
        }
        self.batch.steps = [*self.batch.steps, step]
        self.batch.save(update_fields=["steps"])

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
        return targets.connect(
            self.batch.target.connection(), timeout=settings.BENCHDASH_TARGET_TIMEOUT
        )

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
            _fail(run, reason, "", "batch")
        self._skip_remaining(f"skipped: {reason}")

    def _skip_remaining(self, reason: str) -> None:
        self.batch.runs.filter(status=Status.QUEUED).update(status=Status.SKIPPED, error=reason)

    def _restore_settings(self) -> None:
        self.batch.refresh_from_db(fields=["original_settings"])
        try:
            services.batch_restore_settings(batch=self.batch)
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
            locks.locks_release(batch=batch)
            services.enqueue_batch(batch.pk)
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
        locks.locks_release(batch=batch)
        history.batch_finished(batch=batch)  # a scheduled batch: regression check, news


class Watch:
    """Decides at every tick whether the running benchmark must stop, and why: the user
    cancelled the batch, the run overran its expected duration, or the worker is stopping.
    """

    CANCEL_CHECK_S = 1.0

    def __init__(self, batch_id: int, expected_duration_s: float | None = None) -> None:
        self.batch_id = batch_id
        self.expected_s = expected_duration_s
        self.started = time.monotonic()
        self._last_cancel_check = self.started
        self.limit_s = _time_limit(expected_duration_s)

    def check(self) -> BatchStopped | None:
        now = time.monotonic()
        if WORKER_STOPPING.is_set():
            return BatchStopped(
                Status.INTERRUPTED,
                f"the worker was asked to stop at {timezone.now():%Y-%m-%d %H:%M:%S} UTC; "
                "the batch goes on when a worker is back",
            )
        if self.limit_s is not None and now - self.started > self.limit_s:
            return BatchStopped(
                Status.FAILED,
                f"timed out: still running {now - self.started:.0f} s after it started, "
                f"expected {self.expected_s:g} s; sysbench was stopped",
            )
        if now - self._last_cancel_check >= self.CANCEL_CHECK_S:
            self._last_cancel_check = now
            if Batch.objects.filter(pk=self.batch_id, cancel_requested_at__isnull=False).exists():
                return BatchStopped(Status.CANCELLED, "the batch was cancelled")
        return None


def _time_limit(expected_s: float | None) -> float | None:
    """Expected duration + max(margin, 20 %): generous for slow starts, not for hangs."""
    if expected_s is None:
        return None
    return expected_s + max(settings.BENCHDASH_TIMEOUT_MARGIN_S, 0.2 * expected_s)


def _next_to(config_path: str, name: str) -> str:
    """A file of the executor's private directory: next to the config file."""
    return os.path.join(os.path.dirname(config_path), name)


def _target_text(e: targets.TargetError) -> str:
    return f"{e.message} ({e.hint})" if e.hint else e.message


def _fail(run: Run, message: str, hint: str, kind: str) -> None:
    run.status = Status.FAILED
    run.error = message
    run.error_hint = hint
    run.error_kind = kind
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "error_hint", "error_kind", "finished_at"])
    live.publish_status(run)


def _store_result(
    run: Run, result: ParseResult, *, warmup_s: float, stop: BatchStopped | None = None
) -> None:
    run.exit_code = result.exit_code
    run.outcome = result.outcome
    run.reports = [r.to_dict() for r in result.reports]
    run.histogram = [list(row) for row in (result.steady.histogram if result.steady else [])]
    run.summary = summarise(result, warmup_s=warmup_s)
    run.finished_at = timezone.now()
    if result.outcome == "error":
        primary = result.primary_error
        run.status = Status.FAILED
        # sysbench repeats an error once per thread: keep each distinct line once.
        run.error = "\n".join(dict.fromkeys(e.message for e in result.errors)) or (
            f"sysbench exited with code {result.exit_code} without a complete report"
        )
        run.error_hint = primary.hint if primary else ""
        run.error_kind = primary.kind if primary else "other"
    else:
        run.status = Status.DONE
    if stop is not None:
        # Stopped on purpose: the samples and report so far stay, the status says why.
        run.status = stop.status
        run.error = stop.reason
        run.error_kind = "timeout" if stop.status == Status.FAILED else stop.status
        run.error_hint = ""
    run.save(
        update_fields=[
            "exit_code",
            "outcome",
            "reports",
            "histogram",
            "summary",
            "finished_at",
            "status",
            "error",
            "error_hint",
            "error_kind",
        ]
    )
    live.publish_status(run)


class SampleSink:
    """Collects a run's samples and raw lines and writes them in small bulks.

    Interval lines arrive about once a second; writing every FLUSH_S keeps each sample
    within a second of its line without a query per line. A `--rate` queue line belongs
    to the interval line printed just before it, so it is merged into that sample.
    """

    def __init__(self, run: Run, *, warmup_s: float) -> None:
        self.run = run
        self.warmup_s = warmup_s
        self._pending: list[Sample] = []
        self._lines: list[str] = []  # not yet published
        self._unsaved_log: list[str] = []  # published, not yet in the raw log
        self._last: Sample | None = None
        self._seq = 0
        self._last_flush = time.monotonic()
        self._last_log_flush = self._last_flush

    def add_line(self, line: str) -> None:
        self._lines.append(line + "\n")

    def add(self, event: object) -> None:
        if isinstance(event, IntervalSample):
            self._last = self._sample(event)
            self._pending.append(self._last)
            live.publish_sample(self.run.pk, self._last)  # live first, stored within FLUSH_S
        elif isinstance(event, QueueSample):
            self._merge_queue(event)

    def _sample(self, e: IntervalSample) -> Sample:
        self._seq += 1
        extra = dict(e.extra)
        if e.eps is not None:
            extra["eps"] = e.eps
        return Sample(
            run=self.run,
            seq=self._seq,
            time_s=e.time_s,
            threads=e.threads,
            tps=e.tps,
            qps=e.qps,
            reads=e.reads,
            writes=e.writes,
            other=e.other,
            latency_pct=e.latency_pct,
            latency_ms=e.latency_ms,
            errors_per_s=e.errors_per_s,
            reconnects_per_s=e.reconnects_per_s,
            in_warmup=e.time_s <= self.warmup_s,
            extra=extra,
            received_at=timezone.now(),
        )

    def _merge_queue(self, e: QueueSample) -> None:
        last = self._last
        if last is None or last.time_s != e.time_s:
            return
        last.queue_length = e.queue_length
        last.concurrency = e.concurrency
        if last not in self._pending:  # already written: update the row
            Sample.objects.filter(run=self.run, seq=last.seq).update(
                queue_length=e.queue_length, concurrency=e.concurrency
            )

    def due(self) -> bool:
        return time.monotonic() - self._last_flush >= FLUSH_S

    def flush(self, *, final: bool = False) -> None:
        now = time.monotonic()
        self._last_flush = now
        if self._pending:
            Sample.objects.bulk_create(self._pending)
            self._pending = []
        if self._lines:
            live.publish_lines(self.run.pk, [line.rstrip("\n") for line in self._lines])
            self._unsaved_log += self._lines
            self._lines = []
        if self._unsaved_log and (final or now - self._last_log_flush >= RAW_LOG_FLUSH_S):
            self._last_log_flush = now
            chunk = "".join(self._unsaved_log)
            self._unsaved_log = []
            Run.objects.filter(pk=self.run.pk).update(raw_log=Concat(F("raw_log"), Value(chunk)))
