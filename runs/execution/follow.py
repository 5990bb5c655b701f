"""Following one sysbench process to its end: a run (its samples, live and stored) or a
prepare or cleanup step (its lines and errors).

The worker blocks on sysbench's output until a line comes or something is due (the
heartbeat, the time limit: runs/execution/pulse.py), and sysbench's private directory,
which holds the target's password, is recorded while it exists and removed on every path.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from runs.execution.pulse import Pulse
from runs.execution.results_store import ResultsStore
from runs.execution.sink import SampleSink
from runs.execution.watch import BatchStopped, Watch
from runs.loadhosts import SysbenchProcess
from runs.models import Run
from runs.sysbench.parser import OutputParser, ParseResult, SysbenchError
from runs.targets import counters


@contextmanager
def supervised(
    process: SysbenchProcess, holder: Run, store: ResultsStore
) -> Iterator[SysbenchProcess]:
    """sysbench's private directory is recorded on `holder` while it exists, for the
    sweeper should this worker die, and removed on every path; a failure of the worker's
    own stops sysbench."""
    holder.config_dir = process.config_dir
    store.attempt(lambda: Run.objects.filter(pk=holder.pk).update(config_dir=process.config_dir))
    try:
        yield process
    except BaseException:
        process.kill()
        raise
    finally:
        process.wait()  # removes the directory
        if holder.config_dir:
            holder.config_dir = ""
            store.attempt(lambda: Run.objects.filter(pk=holder.pk).update(config_dir=""))


@dataclass
class Followed:
    """What a sysbench process left: its parsed output, and why it was stopped."""

    result: ParseResult
    stop: BatchStopped | None = None
    lines: list[str] = field(default_factory=list)  # a step's output
    errors: list[SysbenchError] = field(default_factory=list)  # a step's errors, as they came


def follow_run(
    *,
    run: Run,
    process: SysbenchProcess,
    sink: SampleSink,
    sampler: counters.CounterSampler | None,
    pulse: Pulse,
) -> Followed:
    """Each batch of lines parsed and published at once; stored with the heartbeat."""
    parser = OutputParser()
    watch = Watch(run.batch_id, run.expected_duration_s)
    stop: BatchStopped | None = None
    while (lines := process.read(pulse.wait_s(watch))) is not None:
        for line in lines:
            sink.add_line(line)
            for event in parser.feed(line):
                sink.add(event)
        if sink.publish() and sampler is not None:
            sampler.nudge()  # the counters now, while the worker is awake anyway
        stop = pulse.tick(watch, sink, sampler)
        if stop is not None:
            process.kill()
            break
    exit_code = process.wait()
    sink.add_counters(counters.sampler_stop(sampler))
    return Followed(parser.finish(exit_code), stop)


def follow_step(
    *, batch_id: int, process: SysbenchProcess, pulse: Pulse, stoppable: bool
) -> Followed:
    """A prepare (stoppable: a cancel ends it) or a cleanup (runs to its end, even in a
    cancelled batch), beating all along."""
    parser = OutputParser()
    watch = Watch(batch_id)
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
            errors.append(SysbenchError("stopped", stop.reason, "", None))
            break
        stop = None
    return Followed(parser.finish(process.wait()), stop, output, errors)
