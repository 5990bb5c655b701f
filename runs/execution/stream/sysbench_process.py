"""Starting sysbench for a batch on its load host, and following it to its end.

`Starter` builds the command of each phase with the target's connection in its config
file, puts the plan's custom Lua script (a bundle: its entry script and the siblings it
requires) beside that file, and keeps fileio's working
directory, which lives from prepare through the runs to cleanup. `follow_run` and
`follow_stage` then follow the process: a run (its samples, live and stored) or a prepare
or cleanup stage (its lines and errors). The worker blocks on sysbench's output until a
line comes or something is due (the heartbeat, the time limit: heartbeat.py), and
sysbench's private directory, which holds the target's password, is recorded while it
exists and removed on every path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from runs import targets
from runs.columns import RunOptions
from runs.execution.outages.host_wait import host_unreachable
from runs.execution.outages.outage_buffer import OutageBuffer
from runs.execution.stream.cancel import CancelListener
from runs.execution.stream.heartbeat import BatchStopped, Pulse, Watch
from runs.execution.stream.sink import SampleSink
from runs.frozen import FrozenPlan
from runs.loadhosts import Executor, ExecutorError, SysbenchProcess
from runs.models import Batch, Run, Status, Target
from runs.sysbench.command import build_command
from runs.sysbench.options import is_sql_test
from runs.sysbench.parser import OutputParser, ParseResult, SysbenchError
from runs.sysbench.script_command import ScriptCommand, build_script_command
from runs.sysbench.script_options import ScriptInterface
from runs.targets import counters


class BatchAborted(Exception):
    """Nothing more of this batch can run (e.g. sysbench is missing); says why."""


class Starter:
    """How one batch starts sysbench on its load host."""

    def __init__(self, batch: Batch, executor: Executor) -> None:
        self.batch = batch
        self.executor = executor
        self.plan = FrozenPlan.from_params(batch.params)
        self.test = self.plan.test
        self.sql = is_sql_test(self.test)
        # Set by the batch: waits for a load host that cannot be reached, or raises.
        self.host_lost: Callable[[str], None] | None = None

    def test_of(self, run: Run) -> str:
        """The test a run measures: its own (a tests axis), else the plan's (older rows)."""
        return run.test or self.test

    def start(
        self,
        phase: str,
        options: dict[str, Any],
        test: str | None = None,
        target: Target | None = None,
    ) -> SysbenchProcess:
        """sysbench started for `phase` with these options, of `test` (by default the
        plan's) against `target` (the batch's own by default); BatchAborted when it cannot."""
        test = test or self.test
        target = target or self.batch.target
        connection = targets.connection_of(target) if self.sql and target else None
        script = self.plan.script  # a custom Lua script, frozen at launch

        def make(config_path: str) -> Any:
            if script is not None and script.interface is not None:
                return build_script_command(
                    test=self.test,
                    phase=phase,
                    options=options,
                    connection=connection,
                    config_path=config_path,
                    executable=self.executor.sysbench,
                    script=ScriptCommand(
                        path=_next_to(config_path, script.entry_name),
                        interface=ScriptInterface.from_json(script.interface),
                        values=script.options,
                    ),
                )
            return build_command(
                test=test,
                phase=phase,
                # build_command keeps only the data-set options for prepare and cleanup
                options=options,
                connection=connection,
                config_path=config_path,
                executable=self.executor.sysbench,
                script_path=_next_to(config_path, script.entry_name) if script else None,
            )

        files = script.staged_files if script else None
        try:
            return self._start(make, files)
        except ExecutorError as e:
            if self.host_lost is None or not host_unreachable(str(e)):
                raise BatchAborted(str(e)) from None
            self.host_lost(str(e))  # waits for the host, or raises LoadHostGone
        try:
            return self._start(make, files)
        except ExecutorError as e:
            raise BatchAborted(str(e)) from None

    def has_command(self, command: str) -> bool:
        """Whether the plan's custom script has this command of its own (check)."""
        script = self.plan.script
        if script is None or script.interface is None:
            return False
        return ScriptInterface.from_json(script.interface).has(command)

    def _start(self, make: Any, files: dict[str, str] | None) -> SysbenchProcess:
        workspace = self.workspace()
        if workspace:
            return self.executor.start(make, files=files, cwd=workspace)  # type: ignore[call-arg]
        return self.executor.start(make, files=files)

    def workspace(self) -> str | None:
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

    def remove_workspace(self) -> None:
        # A batch handed back to the queue keeps its files for when it resumes.
        if self.test != "fileio" or self.batch.status == Status.QUEUED:
            return
        remove = getattr(self.executor, "remove_workspace", None)
        if remove is not None:
            remove(self.workspace())


def _next_to(config_path: str, name: str) -> str:
    """A file of the executor's private directory: next to the config file."""
    return os.path.join(os.path.dirname(config_path), name)


@contextmanager
def supervised(
    process: SysbenchProcess, holder: Run, store: OutageBuffer
) -> Iterator[SysbenchProcess]:
    """sysbench's private directory is recorded on `holder` while it exists, for the
    sweeper should this worker die, and removed on every path; a failure of the worker's
    own stops sysbench. A lost connection keeps the record: the directory may still be on
    the load host, for the next contact (or the sweeper) to remove."""
    holder.config_dir = process.config_dir
    store.attempt(lambda: Run.objects.filter(pk=holder.pk).update(config_dir=process.config_dir))
    try:
        yield process
    except BaseException:
        process.kill()
        raise
    finally:
        process.wait()  # removes the directory, unless the connection was lost
        if holder.config_dir and not getattr(process, "connection_lost", False):
            holder.config_dir = ""
            store.attempt(lambda: Run.objects.filter(pk=holder.pk).update(config_dir=""))


@dataclass
class Followed:
    """What a sysbench process left: its parsed output, and why it was stopped."""

    result: ParseResult
    stop: BatchStopped | None = None
    lines: list[str] = field(default_factory=list)  # a prepare or cleanup stage's output
    errors: list[SysbenchError] = field(default_factory=list)  # its errors, as they came


def follow_run(
    *,
    run: Run,
    process: SysbenchProcess,
    sink: SampleSink,
    sampler: counters.CounterSampler | None,
    pulse: Pulse,
) -> Followed:
    """Each batch of lines parsed and published at once; stored with the heartbeat."""
    parser = OutputParser(percentile=_percentile(run))
    stop: BatchStopped | None = None
    with CancelListener(run.batch_id, on_cancel=process.kill) as listener:
        watch = Watch(run.batch_id, run.expected_duration_s, listener.heard)
        while (lines := process.read(pulse.wait_s(watch, sampler, ride=True))) is not None:
            for line in lines:
                sink.add_line(line)
                for event in parser.feed(line):
                    sink.add(event)
            published = sink.publish()
            if sampler is not None:  # the counters now, while the worker is awake anyway
                sampler.awake(line=published > 0)
            stop = pulse.tick(watch, sink, sampler)
            if stop is not None:
                process.kill()
                break
        stop = stop or _cancelled(watch)  # killed by the listener: its output ended
    exit_code = process.wait()
    for event in parser.settle(exit_code):  # a last `thds: 0` interval of a failed run
        sink.add(event)
    sink.add_counters(counters.sampler_stop(sampler))
    return Followed(parser.finish(exit_code), stop)


def _percentile(run: Run) -> float | None:
    # A script's report hook prints its latency without saying at which percentile.
    given = RunOptions.load(run.options).values.get("percentile")
    return float(given) if isinstance(given, (int, float)) else None


def follow_stage(
    *, batch_id: int, process: SysbenchProcess, pulse: Pulse, stoppable: bool
) -> Followed:
    """A prepare (stoppable: a cancel ends it, at once) or a cleanup (runs to its end,
    even in a cancelled batch), beating all along."""
    if not stoppable:
        return _follow_stage(Watch(batch_id), process, pulse, stoppable=False)
    with CancelListener(batch_id, on_cancel=process.kill) as listener:
        return _follow_stage(Watch(batch_id, cancel_heard=listener.heard), process, pulse)


def _follow_stage(
    watch: Watch, process: SysbenchProcess, pulse: Pulse, stoppable: bool = True
) -> Followed:
    parser = OutputParser()
    output: list[str] = []
    errors: list[SysbenchError] = []
    stop: BatchStopped | None = None
    while (lines := process.read(pulse.wait_s(watch))) is not None:
        for line in lines:
            output.append(line)
            errors += [e for e in parser.feed(line) if isinstance(e, SysbenchError)]
        stop = pulse.tick(watch)  # beats either way
        if stop is not None and stoppable:
            process.kill()
            break
        stop = None
    stop = stop or _cancelled(watch)  # killed by the listener: its output ended
    if stop is not None:
        errors.append(SysbenchError("stopped", stop.reason, "", None))
    return Followed(parser.finish(process.wait()), stop, output, errors)


def _cancelled(watch: Watch) -> BatchStopped | None:
    return watch.check() if watch.cancel_heard.is_set() else None
