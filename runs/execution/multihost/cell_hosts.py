"""A cell driven from several load hosts at once, on the runner's side.

A server with many cores is not saturated from one load host: sysbench, the network stack
and the client's CPU run out first. The plan names more load hosts; each cell then splits
its threads (and `--rate`) between them or runs them on each (runs/analysis/multihost.py),
and a Celery group starts one driver per host (runs/execution/multihost/host_driver.py).
Every host is connected and staged before any starts: the barrier records how long that
took and how far apart the hosts started (the skew). The runner sums the hosts' interval
samples tick by tick into the cell's samples, live and stored like any run's; the cell's
result comes from the hosts' final reports, its percentiles from their summed histograms.
If one host fails, the others are stopped and the cell fails with that host named.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from runs.analysis import multihost
from runs.columns import RunOptions, RunSummary
from runs.execution.multihost.barrier import CellBarrier
from runs.execution.stream.cancel import CancelListener
from runs.execution.stream.heartbeat import BatchStopped, Pulse, Watch
from runs.execution.stream.sink import SampleSink
from runs.frozen import FrozenPlan
from runs.loadhosts import ExecutorError, executor_for
from runs.models import Batch, LoadHost, LoadSplit, Run, RunHost, Status
from runs.sysbench.output import IntervalSample, ParseResult, QueueSample
from runs.sysbench.parser import parse_text
from runs.targets import counters

# Hands a cell's parts to the drivers (a Celery group): the services pass it in, since
# execution never enqueues.
Dispatch = Callable[[list[int]], None]


def batch_load_hosts(batch: Batch) -> list[LoadHost]:
    """The batch's load hosts in the plan's order: its own, then the extra ones."""
    assert batch.load_host is not None
    extra_ids = FrozenPlan.from_params(batch.params).extra_load_hosts
    extra = {h.pk: h for h in LoadHost.objects.filter(pk__in=extra_ids)}
    return [batch.load_host, *(extra[i] for i in extra_ids if i in extra)]


def cell_parts(run: Run, hosts: Sequence[LoadHost], split: str) -> list[RunHost]:
    """The run's part on each host: its threads, and its share of --rate."""
    rate = RunOptions.load(run.options).rate
    rates: list[int | None] = [rate] * len(hosts)
    if split == LoadSplit.EACH:
        threads = [run.threads] * len(hosts)
    else:
        threads = multihost.split_evenly(run.threads, len(hosts))
        rates = [*multihost.split_evenly(rate, len(hosts))] if rate else rates
    return RunHost.objects.bulk_create(
        RunHost(
            run=run,
            index=i,
            load_host=host,
            threads=threads[i],
            rate=rates[i] or None,
            status=Status.QUEUED,
        )
        for i, host in enumerate(hosts)
    )


@dataclass
class HostsFollowed:
    """What the hosts left: the cell's merged result, and why it was stopped."""

    result: ParseResult
    stop: BatchStopped | None = None
    failures: list[str] = field(default_factory=list)  # "load host X: why"
    coordination: dict[str, Any] = field(default_factory=dict)


class _Ticks:
    """The hosts' samples by tick of the interval clock, summed once every host has it."""

    def __init__(self, hosts: int) -> None:
        self.hosts = hosts
        self._samples: dict[float, dict[int, IntervalSample]] = {}
        self._queues: dict[float, dict[int, QueueSample]] = {}

    def sample(self, index: int, sample: IntervalSample) -> IntervalSample | None:
        tick = self._samples.setdefault(sample.time_s, {})
        tick[index] = sample
        if len(tick) < self.hosts:
            return None
        del self._samples[sample.time_s]
        return multihost.merge_tick([tick[i] for i in sorted(tick)])

    def queue(self, index: int, queue: QueueSample) -> QueueSample | None:
        tick = self._queues.setdefault(queue.time_s, {})
        tick[index] = queue
        if len(tick) < self.hosts:
            return None
        del self._queues[queue.time_s]
        return multihost.merge_queues([[q] for q in tick.values()])[0]


def follow_hosts(
    *,
    run: Run,
    parts: list[RunHost],
    dispatch: Dispatch,
    sink: SampleSink,
    sampler: counters.CounterSampler | None,
    pulse: Pulse,
) -> HostsFollowed:
    """Start the parts together, sum them as they run, and merge their results."""
    barrier = CellBarrier(run.pk, len(parts))
    barrier.forget()  # what a crashed attempt left under this run's keys
    dispatched = time.monotonic()
    dispatch([p.pk for p in parts])
    failures = _barrier(barrier, [p.load_host.name for p in parts])
    staged_s = time.monotonic() - dispatched
    stop: BatchStopped | None = None
    if failures:
        barrier.stop()
    else:
        barrier.go()
        # A cancel stops every host the moment it is published, as for one host
        # (cancel.py); the heartbeat is the fallback.
        with CancelListener(run.batch_id, on_cancel=barrier.stop) as listener:
            watch = Watch(run.batch_id, run.expected_duration_s, listener.heard)
            stop, failures = _sum_hosts(parts, barrier, sink, sampler, pulse, watch)
    # Every host has ended: the closing reading now, before the run's summary is made of
    # the readings (with the answer still on its way, should the worker have sent one).
    sink.add_counters(counters.sampler_stop(sampler))
    barrier.forget()
    for part in parts:
        part.refresh_from_db()
    results = [parse_text(p.raw_log, p.exit_code) for p in parts]
    return HostsFollowed(
        result=multihost.merge_results(results),
        stop=stop,
        failures=failures,
        coordination=_coordination(parts, staged_s),
    )


def _barrier(barrier: CellBarrier, names: list[str]) -> list[str]:
    """Every host staged, or why the cell cannot start."""
    answers = barrier.wait_ready(settings.BENCHDASH_BARRIER_TIMEOUT_S)
    failures = [a.message for a in answers if not a.ok]
    answered = {a.index for a in answers}
    failures += [
        f"load host {names[i]}: not ready within {settings.BENCHDASH_BARRIER_TIMEOUT_S:g} s "
        "(is a worker serving the `drivers` queue?)"
        for i in range(len(names))
        if i not in answered
    ]
    return failures


def _sum_hosts(
    parts: list[RunHost],
    barrier: CellBarrier,
    sink: SampleSink,
    sampler: counters.CounterSampler | None,
    pulse: Pulse,
    watch: Watch,
) -> tuple[BatchStopped | None, list[str]]:
    """Until every host has ended: their lines and summed samples into the cell's sink,
    the heartbeat, and a stop for all when one fails or the batch must stop."""
    ticks = _Ticks(len(parts))
    ended: set[int] = set()
    failures: list[str] = []
    stop: BatchStopped | None = None
    while len(ended) < len(parts):
        for index, payload in barrier.receive(pulse.wait_s(watch, sampler, ride=True)):
            name = parts[index].load_host.name
            for line in payload.get("lines", []):
                sink.add_line(f"[{name}] {line}")
            if "sample" in payload:
                sink.add(ticks.sample(index, IntervalSample(**payload["sample"])))
            if "queue" in payload:
                sink.add(ticks.queue(index, QueueSample(**payload["queue"])))
            if payload.get("end"):
                ended.add(index)
                if payload["status"] == Status.FAILED and not failures and stop is None:
                    failures.append(_failure(parts[index]))
                    barrier.stop()  # the others are stopped
        published = sink.publish()
        if sampler is not None:  # the counters now, while the worker is awake anyway
            sampler.awake(line=published > 0)
        tick_stop = pulse.tick(watch, sink, sampler)
        if tick_stop is not None and stop is None:
            stop = tick_stop
            barrier.stop()
        for index in set(barrier.silent()) - ended:
            ended.add(index)
            failures.append(_driver_lost(parts[index]))
            barrier.stop()
    return stop, failures


def _driver_lost(part: RunHost) -> str:
    """A driver that stopped answering (its worker died): its sysbench is killed."""
    part.refresh_from_db()
    if part.pgid is not None:
        with contextlib.suppress(ExecutorError):  # the sweeper tries again
            executor_for(part.load_host).kill_group(part.pgid)
    return f"load host {part.load_host.name}: its driver stopped answering (a worker died)"


def _failure(part: RunHost) -> str:
    part.refresh_from_db(fields=["error"])
    error = part.error.splitlines()[0] if part.error else "failed"
    return f"load host {part.load_host.name}: {error}"


def _coordination(parts: list[RunHost], staged_s: float) -> dict[str, Any]:
    """How the hosts started: the wait at the barrier and how far apart they started."""
    starts = [p.started_at for p in parts if p.started_at is not None]
    skew = (max(starts) - min(starts)).total_seconds() if len(starts) == len(parts) else None
    return {
        "load_hosts": len(parts),
        "barrier_wait_ms": round(staged_s * 1000, 1),
        "start_skew_ms": round(skew * 1000, 1) if skew is not None else None,
        "hosts": [
            {
                "host": p.load_host.name,
                "threads": p.threads,
                "rate": p.rate,
                "status": p.status,
                "started_at": p.started_at.isoformat() if p.started_at else None,
                "tps": RunSummary.load(p.summary).tps,
                "latency_pct_ms": RunSummary.load(p.summary).latency_pct_ms,
                "error": p.error,
            }
            for p in parts
        ],
    }


def hosts_set_result(run: Run, followed: HostsFollowed) -> None:
    """What only a cell from several hosts has: each host's figures, how they started,
    and the host that failed it."""
    run.summary = {**run.summary, "load_hosts": followed.coordination}
    if followed.failures:
        run.status = Status.FAILED
        run.error = "; ".join(followed.failures)
        if len(followed.coordination.get("hosts", [])) > 1:
            run.error += " (the other load hosts were stopped)"
        run.error_kind = "load_host"
        run.error_hint = ""
