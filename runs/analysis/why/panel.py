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
pair says what moved between the two in one sentence; and, when the server accounted for
its waits (inside.py: performance_schema, or PostgreSQL's sampled waits), what moved in
them: "+0.90 ms of binary log file I/O wait per transaction".

Pure: no Django, no I/O.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.analysis.noise.verdicts import TIMES
from runs.analysis.results import FINISHED_WELL, RunFigures
from runs.analysis.why import budget, direction, fsyncs, inside
from runs.analysis.why.budget import Budget
from runs.analysis.why.fsyncs import MATERIAL, ClassFsync, Fsyncs

EXPLAINED = math.log(1.25)  # prediction and measure within 25 % of each other
BINLOG_LINES = ("binlog_fsyncs", "binlog_fsyncs_from", "binlog_bytes")  # not on PostgreSQL


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
    fsync_ms: float | None  # the cell's average time per fsync over its material classes
    budget: Budget = field(default_factory=Budget)
    untimed: str = ""  # why the fsyncs were not timed, and the fix, when the sampler said
    by_class: Fsyncs = field(default_factory=lambda: Fsyncs({}))  # one figure per class
    waits: dict[str, float] = field(default_factory=dict)  # ms per transaction, per wait
    crowded: str = ""  # the sync probe timed it on a host busier than its cores (fsyncs.py)
    # the redo log's writes that wait for the device (O_DIRECT), when the probe timed one
    log_writes: ClassFsync = field(default_factory=ClassFsync)

    @property
    def fsyncs(self) -> float | None:
        parts = [v for v in (self.log_fsyncs, self.binlog_fsyncs) if v is not None]
        return sum(parts) if parts else None

    def fsync_text(self, cost: float) -> str:
        return (
            f"{self.label}: {self.by_class.text()}{self._writes_text()} ≈ {cost:.3f} ms of "
            f"{self.time_ms:.3f} ms per transaction"
        )

    def _writes_text(self) -> str:
        writes = self.log_writes
        if writes.cost_ms is None or (writes.per_tx or 0) < MATERIAL:
            return ""
        return f"; redo log direct writes {writes.per_tx:.2f}/trx {TIMES} {writes.latency_text()}"

    @property
    def log_name(self) -> str:
        """Its engine's name of its log: the WAL on PostgreSQL, else the redo log."""
        return fsyncs.NAMES[fsyncs.WAL if fsyncs.WAL in self.by_class.classes else fsyncs.REDO]

    @property
    def has_binlog(self) -> bool:
        """Whether its engine has a binary log (PostgreSQL has none: its side lists none)."""
        return fsyncs.BINLOG in self.by_class.classes or not self.by_class.classes

    def to_dict(self) -> dict[str, Any]:
        hidden = ("budget", "by_class", "log_writes")
        figures = {k: v for k, v in self.__dict__.items() if k not in hidden}
        found = {
            **figures,
            "log_writes": self.log_writes.to_dict(),
            "fsyncs": self.fsyncs,
            "fsyncs_by_class": self.by_class.to_dict(),
            "fsyncs_text": self.by_class.text(),
            "log_name": self.log_name,
            "budget": self.budget.to_dict(),
        }
        if not self.has_binlog:
            for figures_of in (found, found["budget"]):
                for name in BINLOG_LINES:
                    figures_of.pop(name, None)
        return found


@dataclass(frozen=True)
class Why:
    base: SideFigures
    other: SideFigures
    threads: int
    latency_ms: float | None  # the time per fsync of the fsyncs that changed, as used
    predicted: float | None  # throughput ratio other / base the model predicts
    measured: float
    text: str
    lower_bound: bool = False  # a latency the model used is the host's lower bound
    # the prediction's interval and direction, and each class's time for both sides
    prediction: direction.Prediction | None = None
    times: tuple[direction.PairTime, ...] = ()

    @property
    def explained(self) -> bool | None:
        """Whether the measured ratio lies within a quarter of the predicted interval."""
        if self.prediction is not None:
            return self.prediction.holds(self.measured, math.exp(EXPLAINED))
        if self.predicted is None or self.predicted <= 0:
            return None
        return abs(math.log(self.predicted / self.measured)) <= EXPLAINED

    @property
    def moved(self) -> str:
        """What moved per transaction from the baseline's cell to the other, in a sentence."""
        return budget.moved(self.other.label, self.base.budget, self.other.budget, self.measured)

    @property
    def fsyncs_moved(self) -> str:
        """Each class whose fsyncs per transaction moved, other against base: "config=b0e0
        makes 0.00 redo log fsyncs per transaction against 1.00; 0.00 binary log fsyncs
        against 1.00"; on PostgreSQL "... WAL fsyncs ..." (a config or an install explains
        itself by its counters, as a setting does)."""
        said = []
        for name in fsyncs.CLASSES:  # the classes either side's engine has, named by it
            mine = self.base.by_class.get(name).per_tx
            theirs = self.other.by_class.get(name).per_tx
            if mine is None or theirs is None or abs(theirs - mine) < MATERIAL:
                continue
            said.append(f"{theirs:.2f} {fsyncs.NAMES[name]} fsyncs against {mine:.2f}")
        if not said:
            return ""
        said[0] = said[0].replace(" fsyncs against ", " fsyncs per transaction against ")
        return f"{self.other.label} makes {'; '.join(said)}"

    @property
    def waits_moved(self) -> str:
        """What moved in the server's own waits per transaction, when both sides have them."""
        return inside.moved(self.other.label, self.base.waits, self.other.waits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "threads": self.threads,
            "base": self.base.to_dict(),
            "other": self.other.to_dict(),
            "moved": self.moved,
            "waits_moved": self.waits_moved,
            "fsyncs_moved": self.fsyncs_moved,
            "fsync_latency_ms": self.latency_ms,
            "predicted_ratio": self.predicted,
            "measured_ratio": self.measured,
            "explained": self.explained,
            "lower_bound": self.lower_bound,
            "text": self.text,
            "predicted_low": None,
            "predicted_high": None,
            "predicted_direction": "",
            **(self.prediction.to_dict() if self.prediction else {}),
            "fsync_times": [t.to_dict() for t in self.times],
        }


def side_figures(label: str, runs: Iterable[RunFigures]) -> SideFigures | None:
    """A cell's figures; None without a finished run with counters."""
    good = _good(runs)
    return _side(label, good, budget.cell_budget(good, _time_ms)) if good else None


def _good(runs: Iterable[RunFigures]) -> list[RunFigures]:
    return [r for r in runs if r.status in FINISHED_WELL and r.throughput and r.counters]


def _side(label: str, good: Sequence[RunFigures], spent: Budget) -> SideFigures:
    timed = [(r.server_counters, fsyncs.host_sync(r.host_summary)) for r in good]
    by_class = fsyncs.cell_fsyncs(timed)
    # Geometric means, as the verdicts': the ratio measured here is the verdict's.
    return SideFigures(
        label=label,
        tps=statistics.geometric_mean(r.throughput or 0.0 for r in good),
        time_ms=spent.time_us / 1000,  # one source: the budget's time per transaction
        log_fsyncs=spent.log_fsyncs,
        binlog_fsyncs=spent.binlog_fsyncs,
        log_bytes=spent.log_bytes,
        binlog_bytes=spent.binlog_bytes,
        fsync_ms=_mean_latency(by_class),
        budget=spent,
        untimed=_untimed(good),
        by_class=by_class,
        waits=inside.cell_waits(r.server_counters.inside for r in good),
        crowded=next((c for r in good if (c := fsyncs.crowded(r.host_summary))), ""),
        log_writes=fsyncs.cell_log_writes(timed),
    )


def _modelled(label: str, runs: Iterable[RunFigures]) -> SideFigures | None:
    """A cell's figures when it counted fsyncs, else None: without them on both sides the
    model has nothing to say, so the rest of a side (its fsyncs by class, waits, log
    writes) is not worth computing. The budget says first whether it counted them."""
    good = _good(runs)
    if not good:
        return None
    spent = budget.cell_budget(good, _time_ms)
    return _side(label, good, spent) if spent.fsyncs is not None else None


def _mean_latency(by_class: Fsyncs) -> float | None:
    timed = [by_class.get(n) for n in by_class.material() if by_class.get(n).ms is not None]
    count = sum(c.per_tx or 0 for c in timed)
    return sum(c.cost_ms or 0 for c in timed) / count if count else None


def _untimed(runs: Iterable[RunFigures]) -> str:
    """Why the server did not time its fsyncs, with the fix, as the sampler found it."""
    for run in runs:
        timing = run.server_counters.fsync_timing
        if timing.reason and not timing.readable:
            fix = f"; {timing.fix}" if timing.fix else ""
            return f"{timing.reason}{fix}"
    return ""


def _time_ms(run: RunFigures) -> float:
    # The average latency is the time per transaction; without it, threads / tps.
    average = run.figures.latency_avg_ms
    if average:
        return average
    return run.threads / float(run.throughput or 1) * 1000


# --- the model -----------------------------------------------------------------------------


def explain(base: SideFigures, other: SideFigures, threads: int) -> Why:
    """The time model of a pair, with its verdict on itself in words. Each class of fsync
    is timed once for both cells, from the same source (direction.pair_time): the
    baseline's fsyncs are taken out and the other's put in, and the prediction carries
    the interval the times' spread allows (direction.predict)."""
    measured = other.tps / base.tps
    if base.fsyncs is None or other.fsyncs is None:
        text = "no fsync counters for these runs: the model has nothing to go on"
        return Why(base, other, threads, None, None, measured, text)
    classes = sorted(set(base.by_class.material()) | set(other.by_class.material()))
    times = []
    for name in classes:
        timed = direction.pair_time(name, base.by_class.get(name), other.by_class.get(name))
        if timed is None:
            return Why(base, other, threads, None, None, measured, _unmeasured(base, other))
        times.append(timed)
    # where the log's writes wait for the device, a write more is a cost as a sync is
    if base.log_writes.cost_ms is not None and other.log_writes.cost_ms is not None:
        writes = direction.pair_time("redo log direct writes", base.log_writes, other.log_writes)
        times += [writes] if writes is not None else []
    guess = direction.predict(base.time_ms, times)
    lower = any(t.lower_bound for t in times)
    extra = (other.fsyncs or 0) - (base.fsyncs or 0)
    latency = (guess.added - guess.removed) / extra if abs(extra) >= MATERIAL else other.fsync_ms
    why = Why(base, other, threads, latency, guess.ratio, measured, "", lower, guess, tuple(times))
    return dataclasses.replace(why, text=_model_text(why, guess))


def _model_text(why: Why, guess: direction.Prediction) -> str:
    costs = ((why.base, guess.removed), (why.other, guess.added))
    parts = [s.fsync_text(cost) for s, cost in costs if cost >= 0.0005] or ["neither side fsyncs"]
    text = "; ".join(parts) + _pooled(why.times)
    text += f" → {guess.words()}, measured {direction.ratio_words(why.measured)}"
    untold = guess.direction == direction.CANNOT_TELL
    probed = any(
        side.by_class.get(n).source == fsyncs.PROBE
        for side in (why.base, why.other)
        for n in side.by_class.material()
    )
    caveat = why.base.crowded or why.other.crowded
    if probed and caveat and not untold:  # else the advice below says it
        text += f" ({caveat})"
    off = why.predicted is None or abs(math.log(why.predicted / why.measured)) > EXPLAINED
    if why.lower_bound and off:  # within what a bound allows, but not near its figure
        text += (
            ": a time per fsync marked ≥ is only a lower bound of an fsync's time (the "
            "device's time per flush, after the data and the file system's journal are "
            "written; or the sync probe's overwrite, for a binary log that grows)" + _needed(why)
        )
    elif not why.explained:
        text += ": the fsyncs do not explain the difference (something else costs time)"
    return text + (f"; to tell: {_narrower(why)}" if untold else "")


def _pooled(times: Sequence[direction.PairTime]) -> str:
    """Each class's time for both sides, where the sides' own figures differ or spread."""
    said = [
        f"{fsyncs.NAMES.get(t.name, t.name)} {t.ms:.3f} ms "
        f"({t.low:.3f} to {'no bound' if t.high == math.inf else f'{t.high:.3f} ms'})"
        for t in times
        if t.high > t.low * direction.POINT
    ]
    return f"; one time for both sides: {', '.join(said)}" if said else ""


def _narrower(why: Why) -> str:
    """What would let the model tell the direction."""
    sources = {t.source for t in why.times}
    if why.base.crowded or why.other.crowded:
        return (
            "the server host had more tasks ready to run than its cores, so each sync may "
            "also have waited for a CPU: run the pair again on a quieter host"
        )
    if fsyncs.PROBE in sources or fsyncs.DISKSTATS in sources:
        return (
            "the server did not time these fsyncs itself: turn on its timer (MariaDB/MySQL "
            "performance_schema; PostgreSQL track_wal_io_timing), or run longer for more "
            "sync probe samples"
        )
    return "the repeats' times per fsync spread this far: more repeats narrow it"


def _needed(why: Why) -> str:
    extra = (why.other.fsyncs or 0) - (why.base.fsyncs or 0)
    gap = why.other.time_ms - why.base.time_ms
    if abs(extra) >= MATERIAL and gap / extra > 0:
        return f"; the difference would need {gap / extra:.3f} ms per fsync"
    return ""


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


def pairs(
    cells: Mapping[str, Mapping[int, Sequence[RunFigures]]],
    labels: Mapping[str, str],
    baseline_key: str,
) -> list[Why]:
    """The model for each series against the baseline, at each thread count both have."""
    result = []
    baseline = cells.get(baseline_key, {})
    bases: dict[int, SideFigures | None] = {}  # each of the baseline's cells once
    for key, by_threads in cells.items():
        if key == baseline_key:
            continue
        for threads in sorted(by_threads):
            if threads not in bases:
                bases[threads] = _modelled(labels[baseline_key], baseline.get(threads, []))
            base = bases[threads]
            if base is None:
                continue
            other = _modelled(labels[key], by_threads[threads])
            if other is not None:
                result.append(explain(base, other, threads))
    return result
