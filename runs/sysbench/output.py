"""What sysbench printed, parsed: interval samples, `--rate` queue samples, reports (final
and checkpoint), and the whole result of a run with its outcome. Pure."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from runs.sysbench.errors import SysbenchError


@dataclass(frozen=True)
class IntervalSample:
    time_s: float
    threads: int
    tps: float | None
    qps: float | None
    reads: float | None
    writes: float | None
    other: float | None
    latency_pct: float | None
    latency_ms: float | None
    errors_per_s: float | None
    reconnects_per_s: float | None
    eps: float | None = None
    extra: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class QueueSample:
    time_s: float
    queue_length: int
    concurrency: int


Event = IntervalSample | QueueSample | SysbenchError


@dataclass
class Report:
    """One final report, or one `[ Ts ] Checkpoint report:`."""

    checkpoint_s: float | None
    sql: dict[str, float] = field(default_factory=dict)
    general: dict[str, float] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)
    fairness: dict[str, float] = field(default_factory=dict)
    histogram: list[tuple[float, int]] = field(default_factory=list)
    unfinished_transactions: int | None = None
    # "lua": printed by the script's report_cumulative hook, one line of rates (lua_reports.py)
    printed_by: str = "sysbench"

    @property
    def empty(self) -> bool:
        """No figure read yet (a checkpoint's header, a histogram at most)."""
        return not (self.sql or self.general or self.latency or self.fairness)

    @property
    def complete(self) -> bool:
        # Every test prints "General statistics:"; without it the output was cut.
        return "total_time_s" in self.general

    def to_dict(self) -> dict[str, Any]:
        return {
            "checkpoint_s": self.checkpoint_s,
            "sql": dict(self.sql),
            "general": dict(self.general),
            "latency": dict(self.latency),
            "fairness": dict(self.fairness),
            "histogram": [[value, count] for value, count in self.histogram],
            "unfinished_transactions": self.unfinished_transactions,
            "printed_by": self.printed_by,
        }


@dataclass
class ParseResult:
    version: str | None
    header: dict[str, Any]
    samples: list[IntervalSample]
    reports: list[Report]
    errors: list[SysbenchError]
    warnings: list[str]
    forced_shutdown: bool
    unrecognised_lines: int
    exit_code: int | None
    queue_samples: list[QueueSample] = field(default_factory=list)

    @property
    def final(self) -> Report | None:
        finals = [r for r in self.reports if r.checkpoint_s is None]
        return finals[-1] if finals else None

    @property
    def steady(self) -> Report | None:
        """The report to compare runs on.

        That is the final report: after a `--report-checkpoints` checkpoint sysbench
        resets its counters, so the final report covers only the time after the last
        checkpoint (the warmup is left out); without checkpoints it covers the run.
        """
        return self.final

    @property
    def primary_error(self) -> SysbenchError | None:
        """The error that best explains a failure: the server's error code wins over
        the generic "unable to connect" and "thread initialization failed" lines."""
        for error in self.errors:
            if error.code is not None:
                return error
        for error in self.errors:
            if error.kind not in ("thread_init", "other"):
                return error
        return self.errors[0] if self.errors else None

    @property
    def outcome(self) -> str:
        """One of "ok", "forced_shutdown" or "error".

        forced_shutdown: exit 2 after `--forced-shutdown`, with a complete final
        report; the results are valid. error: an error line, a failing exit code, or
        no complete final report.
        """
        final = self.final
        if self.errors or final is None or not final.complete:
            return "error"
        if self.exit_code not in (None, 0, 2):
            return "error"
        if self.forced_shutdown:
            return "forced_shutdown"
        # Exit 2 without the forced-shutdown message: worker threads failed to start in time.
        return "error" if self.exit_code == 2 else "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "header": dict(self.header),
            "samples": [asdict(s) for s in self.samples],
            "queue_samples": [asdict(q) for q in self.queue_samples],
            "reports": [r.to_dict() for r in self.reports],
            "errors": [asdict(e) for e in self.errors],
            "warnings": list(self.warnings),
            "forced_shutdown": self.forced_shutdown,
            "unrecognised_lines": self.unrecognised_lines,
            "exit_code": self.exit_code,
            "outcome": self.outcome,
        }
