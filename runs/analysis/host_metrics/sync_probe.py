"""The sync probe's lines summed up: the time of one fsync on the server's log file system
over a run's measured interval (runs/loadhosts/sync_probe.py ran it; the server host's
entry of `Run.host_summary` keeps the result as `sync_probe`).

Two figures, each the median of the samples taken after the warmup and before sysbench
ended: `ms` of the syncs after a pause, `streamed_ms` of the syncs at once after them
(how the two differ, and which a run's fsyncs take: runs/analysis/why/fsyncs.py). Medians,
because a sample that met a stall of the machine (another process's burst of writes, a
journal commit) is seen at a random moment, and a stall of length S is met in proportion
to S and waited on for half of it, so the probe's mean weighs long stalls more than the
server's own fsyncs meet them; its median does not move with them. Its 95 % interval
(order statistics: the ranks n/2 ∓ 0.98 √n) says how far a short run's few samples leave
it. Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

SOURCE = "sync probe"
MIN_SAMPLES = 5  # fewer in the measured interval: no figure, the host's bound stands
READY = "@@benchdash-sync-ready"
PROBLEM = "@@benchdash-sync-problem"


@dataclass(frozen=True)
class SyncSite:
    """Where the server's log is (its directory, and the data directory: the probe's file
    goes on that file system) and how the server writes it: its block, and whether with
    O_DIRECT (runs/targets/sync_probe.py reads them from the server)."""

    log_dir: str
    data_dir: str
    block: int = 4096
    direct: bool = False

    def argv(self, every_s: float) -> list[str]:
        """The probe's arguments."""
        direct = "1" if self.direct else "0"
        return [self.log_dir, self.data_dir, str(self.block), direct, f"{every_s:g}"]


@dataclass(frozen=True)
class ProbeSample:
    at: float  # the probe's clock when its sync started
    sync_ms: float  # the sync after a pause
    write_ms: float
    cpu_s: float  # the probe's own CPU so far
    streamed_ms: float | None = None  # the sync at once after it (None: an older probe)
    streamed_write_ms: float | None = None  # and its write


def sample_parse(line: str) -> ProbeSample | None:
    words = line.split()
    if len(words) not in (4, 5, 6) or line.startswith("@@"):
        return None
    try:
        at, sync_s, write_s, cpu_s, *streamed = (float(w) for w in words)
    except ValueError:
        return None
    ms: list[float | None] = [s * 1000 for s in streamed]
    ms += [None, None]  # an older probe printed neither
    return ProbeSample(at, sync_s * 1000, write_s * 1000, cpu_s, ms[0], ms[1])


def probe_summary(
    lines: Sequence[str], *, offset: float | None, start: float, end: float, every_s: float
) -> dict[str, Any]:
    """The `sync_probe` of the server host's summary: the probe's lines (its clock +
    `offset` = the worker's), the measured interval [start, end] on the worker's clock.
    A probe that could not run, or took too few samples, gives `problem` alone."""
    problem = next((ln.split(" ", 1)[1] for ln in lines if ln.startswith(PROBLEM + " ")), "")
    ready = next((ln.split() for ln in lines if ln.startswith(READY + " ")), None)
    if ready is None or offset is None:
        return {"problem": problem or "the sync probe took no sample"}
    samples = [s for s in map(sample_parse, lines) if s is not None]
    steady = [s for s in samples if start <= s.at + offset <= end]
    if len(steady) < MIN_SAMPLES:  # a probe that stopped says why; else the run was short
        return {
            "problem": problem
            or f"the sync probe took {len(steady)} samples in the measured "
            f"interval ({MIN_SAMPLES} needed): too short a run for it"
        }
    times = sorted(s.sync_ms for s in steady)
    low, high = median_interval(times)
    return {
        "ms": round(statistics.median(times), 4),
        "streamed_ms": _median_of(s.streamed_ms for s in steady),
        "streamed_write_ms": _median_of(s.streamed_write_ms for s in steady),
        "ci_low_ms": round(low, 4),
        "ci_high_ms": round(high, 4),
        "p25_ms": round(_quantile(times, 0.25), 4),
        "p75_ms": round(_quantile(times, 0.75), 4),
        "mean_ms": round(statistics.fmean(times), 4),
        "write_ms": round(statistics.median(s.write_ms for s in steady), 4),
        "samples": len(steady),
        "every_s": every_s,
        "dir": ready[1] if len(ready) > 1 else "",
        "mode": ready[2] if len(ready) > 2 else "",
        "block": int(ready[3]) if len(ready) > 3 and ready[3].isdigit() else None,
        "cost": probe_cost(samples, int(ready[3]) if len(ready) > 3 and ready[3].isdigit() else 0),
    }


def _median_of(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 4) if known else None


def median_interval(ordered: Sequence[float]) -> tuple[float, float]:
    """A 95 % interval of the median of `ordered` (sorted), from the order statistics
    (the binomial's normal approximation): distribution-free."""
    n = len(ordered)
    half = 0.98 * math.sqrt(n)
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half) - 1)
    return ordered[lo], ordered[hi]


def probe_cost(samples: Sequence[ProbeSample], block: int) -> dict[str, float] | None:
    """What the probe itself took over its samples: its CPU (% of one core), its syncs
    and the KB it wrote a second."""
    if len(samples) < 2 or samples[-1].at <= samples[0].at:
        return None
    seconds = samples[-1].at - samples[0].at
    each = 2 if samples[-1].streamed_ms is not None else 1  # a sample's syncs
    syncs = each * (len(samples) - 1) / seconds
    return {
        "cpu_pct": round(100 * (samples[-1].cpu_s - samples[0].cpu_s) / seconds, 3),
        "syncs_s": round(syncs, 2),
        "kb_s": round(syncs * block / 1024, 1),
    }


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)
