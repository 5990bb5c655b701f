"""Driving one load host's part of a cell run from several hosts (a Celery task on the
`drivers` queue, one per host, dispatched together as a group by the cell's runner).

The driver stages sysbench on its host, says it is ready and waits at the barrier
(runs/execution/multihost/barrier.py); on go it starts sysbench, sends each batch of lines and
the interval samples parsed from them to the runner, which sums the hosts, and keeps the
host's own samples and output. A stop from the runner (another host failed, the batch was
cancelled, the time limit) kills its sysbench.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any

from django.conf import settings
from django.utils import timezone

from runs import targets
from runs.analysis.summary import summarise
from runs.errors import InvalidInput
from runs.execution.multihost.barrier import CellBarrier
from runs.execution.stream import live
from runs.frozen import FrozenPlan
from runs.loadhosts import ExecutorError, StagedStart, SysbenchProcess, executor_for
from runs.models import HostSample, RunHost, Status
from runs.sysbench.command import build_command
from runs.sysbench.errors import exit_text
from runs.sysbench.options import is_sql_test
from runs.sysbench.parser import IntervalSample, OutputParser, ParseResult, QueueSample

logger = logging.getLogger(__name__)

READ_S = 0.25  # how long a read waits for output before the driver looks for a stop
STORE_S = 5.0  # the host's own samples are stored in bulk this often
SAMPLE_FIELDS = ("time_s", "threads", "tps", "qps", "latency_ms", "errors_per_s")


def host_drive(*, run_host_id: int) -> None:
    """Run this host's part of its cell; a redelivered task finds it taken and returns."""
    if not RunHost.objects.filter(pk=run_host_id, status=Status.QUEUED).update(
        status=Status.PREPARING
    ):
        return
    part = RunHost.objects.select_related("run__batch__target", "run__target", "load_host").get(
        pk=run_host_id
    )
    barrier = CellBarrier(part.run_id, part.run.hosts.count())
    barrier.alive(part.index)
    staged = _stage(part, barrier)
    if staged is None:
        return
    if not barrier.wait_go(part.index, settings.BENCHDASH_BARRIER_TIMEOUT_S):
        staged.abandon()
        _end(part, barrier, Status.SKIPPED, "the cell did not start: another host failed or "
             "the batch stopped")  # fmt: skip
        return
    try:
        process = staged.go()
    except ExecutorError as e:
        _end(part, barrier, Status.FAILED, str(e), kind="executor")
        return
    _record_start(part, process)
    result = _follow(part, process, barrier)
    _store_result(part, result, stopped=barrier.stop_requested())
    barrier.send(part.index, [{"end": True, "status": part.status}])


def _stage(part: RunHost, barrier: CellBarrier) -> StagedStart | None:
    """Connected, with sysbench's files in place; None (and the barrier told why) when
    the host cannot be used."""
    try:
        executor = executor_for(part.load_host, settings.BENCHDASH_SYSBENCH)
        staged = executor.stage(lambda path: _command(part, path, executor.sysbench))
    except (ExecutorError, InvalidInput) as e:
        message = f"load host {part.load_host.name}: {e}"
        _end(part, barrier, Status.FAILED, message, kind="executor")
        barrier.ready(part.index, ok=False, message=message)
        return None
    part.ready_at = timezone.now()
    part.config_dir = staged.config_dir
    part.save(update_fields=["ready_at", "config_dir"])
    barrier.ready(part.index, ok=True)
    return staged


def _command(part: RunHost, config_path: str, executable: str) -> Any:
    run, batch = part.run, part.run.batch
    test = run.test or FrozenPlan.from_params(batch.params).test  # a tests axis: its own
    options: dict[str, object] = {**run.options, "threads": part.threads}
    if part.rate is not None:
        options["rate"] = part.rate
    target = run.target if run.target_id is not None else batch.target  # its own server
    connection = targets.connection_of(target) if is_sql_test(test) and target else None
    return build_command(
        test=test,
        phase="run",
        options=options,
        connection=connection,
        config_path=config_path,
        executable=executable,
    )


def _record_start(part: RunHost, process: SysbenchProcess) -> None:
    part.started_at = timezone.now()
    part.status = Status.RUNNING
    part.pgid = process.pgid
    part.save(update_fields=["started_at", "status", "pgid"])


def _follow(part: RunHost, process: SysbenchProcess, barrier: CellBarrier) -> ParseResult:
    """Every batch of lines read goes to the runner at once, with the samples parsed
    from it; the host's own samples are stored every few seconds."""
    parser = OutputParser()
    held: list[HostSample] = []
    log: list[str] = []
    seq = 0
    last_store = last_alive = time.monotonic()
    while (lines := process.read(READ_S)) is not None:
        payloads: list[dict[str, Any]] = [{"lines": lines}] if lines else []
        samples: list[dict[str, Any]] = []
        for event in (event for line in lines for event in parser.feed(line)):
            if isinstance(event, IntervalSample):
                seq += 1
                held.append(_host_sample(part, seq, event))
                samples.append(dataclasses.asdict(event))
                payloads.append({"sample": samples[-1]})
            elif isinstance(event, QueueSample):
                payloads.append({"queue": dataclasses.asdict(event)})
        log += lines
        barrier.send(part.index, payloads)
        live.publish_host(part.run_id, part.index, part.load_host.name, samples)
        now = time.monotonic()
        if now - last_alive >= 1.0:
            barrier.alive(part.index)
            last_alive = now
            if barrier.stop_requested():
                process.kill()
        if now - last_store >= STORE_S:
            HostSample.objects.bulk_create(held, ignore_conflicts=True)
            held, last_store = [], now
    exit_code = process.wait()
    # A last `thds: 0` interval of a failed run comes back only now (parser.settle).
    held += [
        _host_sample(part, seq + 1, e)
        for e in parser.settle(exit_code)
        if isinstance(e, IntervalSample)
    ]
    HostSample.objects.bulk_create(held, ignore_conflicts=True)
    part.raw_log = "".join(line + "\n" for line in log)
    return parser.finish(exit_code)


def _host_sample(part: RunHost, seq: int, event: IntervalSample) -> HostSample:
    figures = {name: getattr(event, name) for name in SAMPLE_FIELDS}
    return HostSample(run_host_id=part.pk, seq=seq, **figures)


def _store_result(part: RunHost, result: ParseResult, *, stopped: bool) -> None:
    part.exit_code = result.exit_code
    warmup_s = FrozenPlan.from_params(part.run.batch.params).warmup_s
    part.summary = summarise(result, warmup_s=float(warmup_s))
    part.histogram = [list(row) for row in (result.final.histogram if result.final else [])]
    part.finished_at = timezone.now()
    part.config_dir = ""  # the executor removed it when sysbench ended
    if stopped and result.outcome == "error":
        # Killed on the runner's word: another host failed, or the batch had to stop.
        part.status = Status.CANCELLED
        part.error = "stopped with the cell: another load host failed or the batch stopped"
    elif result.outcome == "error":
        primary = result.primary_error
        part.status = Status.FAILED
        part.error_kind = primary.kind if primary else "other"
        part.error = "\n".join(dict.fromkeys(e.message for e in result.errors)) or (
            f"sysbench {exit_text(result.exit_code)} without a complete report"
        )
    else:
        part.status = Status.DONE
    part.save()


def _end(part: RunHost, barrier: CellBarrier, status: str, message: str, *, kind: str = "") -> None:
    part.status = status
    part.error = message
    part.error_kind = kind
    part.finished_at = timezone.now()
    part.save(update_fields=["status", "error", "error_kind", "finished_at"])
    barrier.send(part.index, [{"end": True, "status": status}])
