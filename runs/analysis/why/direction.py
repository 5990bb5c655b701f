# ruff: noqa: RUF002  (the times sign is what people read in the model's sentence)
"""The why model's prediction as an interval, and whether it can tell the direction.

Each file class (and the redo log's direct writes) is timed once for both sides of a
pair: from the best source either side has for it (the server's own timer, else the sync
probe, else the device's bound), both sides' figures of that source pooled: their mean,
and the lowest and highest either side's interval allows (fsyncs.py: the source's spread,
the probe's error and, on a crowded host, the wait for a CPU). A class whose count did
not move then costs both sides the same; before, each side's own figure was used, and
the probe's two readings of one write (0.101 and 0.157 ms under load) turned flush 1 → 2
into "1.2× slower" where it measured 1.3× faster.

The predicted time per transaction is the baseline's, less its fsyncs' cost, plus the
other's: linear in each class's time, so its extremes take each class's low or high end
by the sign of its change. When the interval of the predicted ratio holds 1×, the model
cannot tell the direction, and says so instead of predicting one. Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from runs.analysis.noise.verdicts import TIMES, magnitude
from runs.analysis.why.fsyncs import MATERIAL, RANK, ClassFsync

FASTER, SLOWER, CANNOT_TELL = "faster", "slower", "cannot tell"
POINT = 1.005  # an interval this narrow is shown as its point


@dataclass(frozen=True)
class PairTime:
    """One class's time per fsync (or per direct write) for both sides of a pair, from one
    source, with each side's count per transaction."""

    name: str
    base_per_tx: float
    other_per_tx: float
    ms: float
    low: float
    high: float  # math.inf: no bound above (the device's flush, the probe on a binary log)
    source: str
    lower_bound: bool

    @property
    def change(self) -> float:
        return self.other_per_tx - self.base_per_tx

    def to_dict(self) -> dict[str, object]:
        return {
            "class": self.name,
            "ms": self.ms,
            "low_ms": self.low,
            "high_ms": None if self.high == math.inf else self.high,
            "source": self.source,
            "change_per_tx": self.change,
        }


def pair_time(name: str, mine: ClassFsync, theirs: ClassFsync) -> PairTime | None:
    """The time of one `name` for both sides; None when neither side timed it."""
    timed = [c for c in (mine, theirs) if c.ms is not None]
    if not timed:
        return None
    # a side that (almost) never fsyncs the class has no pace of its own to time it at
    timed = [c for c in timed if (c.per_tx or 0) >= MATERIAL] or timed
    best = min(RANK.get(c.source, 0) for c in timed)
    same = [c for c in timed if RANK.get(c.source, 0) == best]
    return PairTime(
        name, mine.per_tx or 0.0, theirs.per_tx or 0.0,
        ms=statistics.fmean(c.ms or 0.0 for c in same),
        low=min(c.low or 0.0 for c in same),
        high=max(c.high or 0.0 for c in same),
        source=same[0].source,
        lower_bound=any(c.lower_bound for c in same),
    )  # fmt: skip


@dataclass(frozen=True)
class Prediction:
    """The predicted throughput ratio other / base, with how low and how high it may be
    (None: the model has no figure; high None: no bound above)."""

    ratio: float | None
    low: float | None
    high: float | None
    removed: float  # ms per transaction the baseline's fsyncs cost, at the pair's times
    added: float  # and the other's
    moves: bool  # whether any fsync count moved enough to matter

    @property
    def direction(self) -> str:
        if self.ratio is None or self.low is None:
            return ""
        if self.low > 1:
            return FASTER
        if self.high is not None and self.high < 1:
            return SLOWER
        return CANNOT_TELL

    def holds(self, measured: float, slack: float) -> bool | None:
        """Whether `measured` lies within the interval widened by `slack` (a factor)."""
        if self.ratio is None or self.ratio <= 0 or self.low is None:
            return None
        high = math.inf if self.high is None else self.high
        return self.low / slack <= measured <= high * slack

    def words(self) -> str:
        """What the model says of the direction, in words."""
        if self.ratio is None:
            return "model predicts nothing"
        if not self.moves:
            return "no fsync count moved: the model predicts no difference"
        if self.direction == CANNOT_TELL:
            return (
                "cannot tell the direction from the fsyncs: the model's ratio spans "
                f"{self._span()} (from what each fsync may take)"
            )
        said = f"model predicts {ratio_words(self.ratio)}"
        if self.high is None or not self.low or self.high > self.low * POINT:
            said += f" ({self._span()})"
        return said

    def _span(self) -> str:
        low = f"{self.low or 0:.2f}{TIMES}"
        if self.high is None:
            return f"{low} and up, with no bound above"
        return f"{low} to {self.high:.2f}{TIMES}"

    def to_dict(self) -> dict[str, object]:
        return {
            "predicted_ratio": self.ratio,
            "predicted_low": self.low,
            "predicted_high": self.high,
            "predicted_direction": self.direction,
        }


def predict(base_time_ms: float, times: Sequence[PairTime]) -> Prediction:
    """The predicted ratio and its interval: the baseline's time per transaction less its
    fsyncs' cost plus the other's, each class at its low or high end."""
    removed = sum(t.base_per_tx * t.ms for t in times)
    added = sum(t.other_per_tx * t.ms for t in times)
    fastest = slowest = base_time_ms
    for t in times:
        if t.high == math.inf and abs(t.change) < MATERIAL:
            continue  # a count's noise times an unbounded time is no prediction
        fastest += t.change * (t.low if t.change > 0 else t.high)
        slowest += t.change * (t.high if t.change > 0 else t.low)
    point = base_time_ms - removed + added
    if point <= 0 or base_time_ms <= 0:
        return Prediction(None, None, None, removed, added, True)
    moves = any(abs(t.change) >= MATERIAL for t in times)
    high = base_time_ms / fastest if fastest > 0 else None  # fastest ≤ 0: no bound above
    low = 0.0 if slowest == math.inf else base_time_ms / slowest
    return Prediction(base_time_ms / point, low, high, removed, added, moves)


def ratio_words(value: float) -> str:
    return f"{magnitude(value)} {FASTER if value >= 1 else SLOWER}"
