"""What a run ends with: its result parsed from sysbench's report, or its failure, stored
and announced to live viewers."""

from __future__ import annotations

from django.utils import timezone

from runs import targets
from runs.analysis.summary import summarise
from runs.execution import live
from runs.execution.heartbeat import BatchStopped
from runs.models import Run, Status
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
        run.error_kind = stop.kind
        run.error_hint = ""
