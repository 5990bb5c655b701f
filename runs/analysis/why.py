"""Why one setting is faster than another: a per-transaction time model from the server
counters sampled during the runs.

Each side of a pair (the baseline's cell and another series' cell at the same threads)
spends some time per transaction (its average latency); of that, its fsyncs take about
fsyncs per transaction x the server's fsync latency. If the fsyncs are the difference,
taking one side's fsync time out and putting the other's in predicts the other's time
per transaction, hence the throughput ratio, which is set beside the measured one:

    flush=1: 1.00 fsync/trx x 0.160 ms = 0.160 ms of 0.280 ms per transaction
    -> the model predicts 2.3x, measured 2.2x

When the prediction is off by more than a quarter, the fsyncs do not explain the
difference, and the panel says so. Without a measured fsync latency (MariaDB/MySQL's
performance_schema off or not readable, PostgreSQL's track_wal_io_timing off: the sampler
records which, and the statement that fixes it) it gives the latency that would explain
all of the difference instead.

Each side also carries its budget per transaction (budget.py: server CPU, off-CPU time,
context switches, I/Os, bytes written, fsyncs of the log and the binary log), and the
pair says what moved between the two in one sentence.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.analysis import budget
from runs.analysis.budget import Budget
from runs.analysis.results import FINISHED_WELL, RunFigures
from runs.analysis.verdicts import TIMES, magnitude
from runs.columns import RunCounters

EXPLAINED = math.log(1.25)  # prediction and measure within 25 % of each other
PS_PER_MS = 1e9

# (count, total time, time unit per ms) of the server's own fsync timing
FSYNC_TIMERS = (
    ("pfs_log_file_syncs", "pfs_log_file_sync_ps", PS_PER_MS),
    ("pfs_binlog_syncs", "pfs_binlog_sync_ps", PS_PER_MS),
    ("pfs_data_file_syncs", "pfs_data_file_sync_ps", PS_PER_MS),
    ("wal_sync", "wal_sync_time", 1.0),
)


@dataclass(frozen=True)
class SideFigures:
    """One side of the pair over its finished repeats: throughput and time per transaction
    as geometric means, the counters' ratios as medians."""

    label: str
    tps: float
    time_ms: float  # time per transaction
    log_fsyncs: float | None  # per transaction
    binlog_fsyncs: float | None
    log_bytes: float | None
    binlog_bytes: float | None
    fsync_ms: float | None  # the server's average fsync latency, when it times them
    budget: Budget = field(default_factory=Budget)
    untimed: str = ""  # why the fsyncs were not timed, and the fix, when the sampler said

    @property
    def fsyncs(self) -> float | None:
        parts = [v for v in (self.log_fsyncs, self.binlog_fsyncs) if v is not None]
        return sum(parts) if parts else None

    def fsync_text(self, latency: float) -> str:
        cost = (self.fsyncs or 0) * latency
        return (
            f"{self.label}: {self.fsyncs or 0:.2f} fsync/trx {TIMES} {latency:.3f} ms ≈ "
            f"{cost:.3f} ms of {self.time_ms:.3f} ms per transaction"
        )

    def to_dict(self) -> dict[str, Any]:
        figures = {k: v for k, v in self.__dict__.items() if k != "budget"}
        return {**figures, "fsyncs": self.fsyncs, "budget": self.budget.to_dict()}


@dataclass(frozen=True)
class Why:
    base: SideFigures
    other: SideFigures
    threads: int
    latency_ms: float | None  # the fsync latency the model uses
    predicted: float | None  # throughput ratio other / base the model predicts
    measured: float
    text: str

    @property
    def explained(self) -> bool | None:
        if self.predicted is None or self.predicted <= 0:
            return None
        return abs(math.log(self.predicted / self.measured)) <= EXPLAINED

    @property
    def moved(self) -> str:
        """What moved per transaction from the baseline's cell to the other, in a sentence."""
        return budget.moved(self.other.label, self.base.budget, self.other.budget, self.measured)

    def to_dict(self) -> dict[str, Any]:
        return {
            "threads": self.threads,
            "base": self.base.to_dict(),
            "other": self.other.to_dict(),
            "moved": self.moved,
            "fsync_latency_ms": self.latency_ms,
            "predicted_ratio": self.predicted,
            "measured_ratio": self.measured,
            "explained": self.explained,
            "text": self.text,
        }


def side_figures(label: str, runs: Iterable[RunFigures]) -> SideFigures | None:
    """A cell's figures; None without a finished run with counters."""
    good = [r for r in runs if r.status in FINISHED_WELL and r.throughput and r.counters]
    if not good:
        return None
    spent = budget.cell_budget(good, _time_ms)
    # Geometric means, as the verdicts': the ratio measured here is the verdict's.
    return SideFigures(
        label=label,
        tps=statistics.geometric_mean(r.throughput or 0.0 for r in good),
        time_ms=spent.time_us / 1000,  # one source: the budget's time per transaction
        log_fsyncs=spent.log_fsyncs,
        binlog_fsyncs=spent.binlog_fsyncs,
        log_bytes=spent.log_bytes,
        binlog_bytes=spent.binlog_bytes,
        fsync_ms=_median(fsync_latency_ms(RunCounters.load(r.counters).deltas) for r in good),
        budget=spent,
        untimed=_untimed(good),
    )


def _untimed(runs: Iterable[RunFigures]) -> str:
    """Why the server did not time its fsyncs, with the fix, as the sampler found it."""
    for run in runs:
        timing = run.server_counters.fsync_timing
        if timing.reason and not timing.readable:
            fix = f"; {timing.fix}" if timing.fix else ""
            return f"{timing.reason}{fix}"
    return ""


def fsync_latency_ms(deltas: Mapping[str, float]) -> float | None:
    """The server's own average fsync time, where it times them (performance_schema,
    pg_stat_wal's wal_sync_time)."""
    count = total = 0.0
    for count_name, time_name, per_ms in FSYNC_TIMERS:
        if deltas.get(count_name) and deltas.get(time_name):
            count += float(deltas[count_name])
            total += float(deltas[time_name]) / per_ms
    return total / count if count else None


def _time_ms(run: RunFigures) -> float:
    # The average latency is the time per transaction; without it, threads / tps.
    average = run.figures.latency_avg_ms
    if average:
        return average
    return run.threads / float(run.throughput or 1) * 1000


def _median(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


# --- the model -----------------------------------------------------------------------------


def explain(base: SideFigures, other: SideFigures, threads: int) -> Why:
    """The time model of a pair, with its verdict on itself in words."""
    measured = other.tps / base.tps
    latency = _latency(base, other)
    if base.fsyncs is None or other.fsyncs is None:
        text = "no fsync counters for these runs: the model has nothing to go on"
        return Why(base, other, threads, latency, None, measured, text)
    if latency is None:
        return Why(base, other, threads, None, None, measured, _unmeasured(base, other))
    predicted_time = base.time_ms - base.fsyncs * latency + other.fsyncs * latency
    predicted = base.time_ms / predicted_time if predicted_time > 0 else None
    why = Why(base, other, threads, latency, predicted, measured, "")
    return Why(base, other, threads, latency, predicted, measured, _model_text(why))


def _latency(base: SideFigures, other: SideFigures) -> float | None:
    # The side that fsyncs more measures the latency on more fsyncs.
    sides = sorted((base, other), key=lambda s: s.fsyncs or 0, reverse=True)
    return next((s.fsync_ms for s in sides if s.fsync_ms), None)


def _model_text(why: Why) -> str:
    assert why.latency_ms is not None
    costly = [s for s in (why.base, why.other) if (s.fsyncs or 0) * why.latency_ms >= 0.0005]
    parts = [s.fsync_text(why.latency_ms) for s in costly] or ["neither side fsyncs"]
    predicted = "nothing" if why.predicted is None else _ratio(why.predicted)
    text = "; ".join(parts) + f" → model predicts {predicted}, measured {_ratio(why.measured)}"
    if not why.explained:
        text += ": the fsyncs do not explain the difference (something else costs time)"
    return text


def _unmeasured(base: SideFigures, other: SideFigures) -> str:
    untimed = base.untimed or other.untimed or "performance_schema or track_wal_io_timing off"
    text = (
        f"{base.label}: {base.fsyncs or 0:.2f} fsync/trx, {other.label}: "
        f"{other.fsyncs or 0:.2f} fsync/trx; the server's fsync latency was not measured "
        f"({untimed})"
    )
    extra = (other.fsyncs or 0) - (base.fsyncs or 0)
    gap = other.time_ms - base.time_ms
    if abs(extra) >= 0.05 and gap / extra > 0:
        text += f"; the difference would need {gap / extra:.3f} ms per fsync"
    return text


def _ratio(value: float) -> str:
    return f"{magnitude(value)} {'faster' if value >= 1 else 'slower'}"


def pairs(
    cells: Mapping[str, Mapping[int, Sequence[RunFigures]]],
    labels: Mapping[str, str],
    baseline_key: str,
) -> list[Why]:
    """The model for each series against the baseline, at each thread count both have."""
    result = []
    baseline = cells.get(baseline_key, {})
    for key, by_threads in cells.items():
        if key == baseline_key:
            continue
        for threads in sorted(by_threads):
            base = side_figures(labels[baseline_key], baseline.get(threads, []))
            other = side_figures(labels[key], by_threads[threads])
            # Without fsync counters on both sides the model has nothing to say.
            if base and other and base.fsyncs is not None and other.fsyncs is not None:
                result.append(explain(base, other, threads))
    return result
