"""What a run ends with: its result parsed from sysbench's report, or its failure, stored
and announced to live viewers."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from runs import targets
from runs.analysis.summary import summarise
from runs.execution.outages.target_wait import unreachable
from runs.execution.stream import live
from runs.execution.stream.heartbeat import BatchStopped
from runs.models import Run, Status, Target
from runs.sysbench.errors import exit_text, server_gone
from runs.sysbench.parser import (
    ParseResult,
)


def target_error_text(e: targets.TargetError) -> str:
    return f"{e.message} ({e.hint})" if e.hint else e.message


def run_fail(run: Run, message: str, hint: str, kind: str) -> None:
    run.status = Status.FAILED
    run.error = message
    run.error_hint = hint
    run.error_kind = kind
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "error_hint", "error_kind", "finished_at"])
    live.publish_status(run)


# What a run's end writes. Not config_dir: `supervised` clears it once the directory is
# gone, and keeps it when the connection to the load host was lost.
RESULT_FIELDS = [
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
    "counters",
    "warnings",
    "host_summary",
    "bottleneck",
    "environment",  # with the rows of its tables counted after it (row_counts.py)
]


def run_set_result(
    run: Run, result: ParseResult, *, warmup_s: float, stop: BatchStopped | None = None
) -> None:
    """The run's result on `run`, not saved yet."""
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
            f"sysbench {exit_text(result.exit_code)} without a complete report"
        )
        run.error_hint = primary.hint if primary else ""
        run.error_kind = primary.kind if primary else "other"
    else:
        run.status = Status.DONE
    if stop is not None:
        # Stopped on purpose: the samples and report so far stay, the status says why.
        run.status = stop.status
        run.error = stop.reason
        run.error_kind = stop.kind
        run.error_hint = ""


def run_name_server_gone(run: Run, result: ParseResult, target: Target | None) -> None:
    """A run that failed as its server went away says so ("the server closed the
    connection at ..."), whether sysbench printed why (MySQL's error 2013, libpq's words)
    or printed nothing and crashed (sysbench's pgsql driver: SIGSEGV): then the server not
    answering afterwards tells. Any other failure keeps sysbench's own words."""
    if run.status != Status.FAILED or target is None or run.error_kind == "load_host":
        return
    said = list(dict.fromkeys(e.message for e in result.errors))
    if said and not unreachable("\n".join(said)):
        return  # sysbench named another cause
    afterwards = _unreachable_now(target)
    if not said and afterwards is None:
        return  # it answers: nothing says the server went away
    into = result.samples[-1].time_s if result.samples else None
    start = run.started_at or timezone.now()
    at = start + timedelta(seconds=into) if into is not None else timezone.now()
    gone = server_gone(
        at=at, into_s=into, said=said, exit_code=result.exit_code, afterwards=afterwards
    )
    run.error, run.error_hint, run.error_kind = gone.message, gone.hint, gone.kind


def _unreachable_now(target: Target) -> str | None:
    """What connecting to the target says when it is not there; None when it answers."""
    try:
        with targets.connect_to(target):
            return None
    except targets.TargetError as e:
        return e.message if unreachable(e.message) else None
