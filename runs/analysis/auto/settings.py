"""The automatic modes a plan may ask for, with their defaults, read from the plan's
`auto` field and checked: repeats until the answer is clear (repeats.py), the knee of
the threads curve (threads.py), the highest sustainable open-loop rate (rate.py).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from runs.analysis.noise.verdicts import MIN_REPEATS
from runs.errors import InvalidInput

MAX_THREADS = 100_000
# Settings that are words, not numbers: mode -> setting -> the words allowed.
CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "repeats": {"metric": ("throughput", "latency")},
}
MAX_RATE = 100_000_000


@dataclass(frozen=True)
class RepeatsAuto:
    target_pct: float = 2.0  # relative half-width of the 95 % CI of a cell without baseline
    max: int = 5
    margin_pct: float = 2.0  # equivalence margin of a cell's ratio to the baseline's
    # the figure whose repeats are watched: throughput, or the latency percentile (a
    # confirmation re-run watches the metric that was alerted)
    metric: str = "throughput"


@dataclass(frozen=True)
class ThreadsAuto:
    max: int = 64
    slo_p95_ms: float | None = None
    rise_pct: float = 5.0  # doubling goes on while throughput rises by more than this


@dataclass(frozen=True)
class RateAuto:
    start: int = 100
    max: int = 1_000_000
    slo_p95_ms: float | None = None
    tolerance_pct: float = 5.0  # achieved may fall this far below the target rate
    precision_pct: float = 10.0  # bisection stops when the bracket is this narrow


@dataclass(frozen=True)
class HoldAuto:
    """A stepped-concurrency plan (threads in ramp order) holding its last level longer:
    the largest thread count runs this many seconds (--time), the others the plan's.
    Read from the `hold` key of the plan's `auto` field (hold_from_dict)."""

    last_level_s: int = 60


@dataclass(frozen=True)
class Auto:
    repeats: RepeatsAuto | None = None
    threads: ThreadsAuto | None = None
    rate: RateAuto | None = None

    @property
    def any(self) -> bool:
        """Whether a mode adds runs as the batch goes."""
        return any((self.repeats, self.threads, self.rate))

    def start_repeats(self, plan_repeats: int) -> int:
        """Repeats of each new cell: with repeats auto, enough for a verdict."""
        if self.repeats is None:
            return plan_repeats
        return min(max(plan_repeats, MIN_REPEATS), self.repeats.max)

    def to_dict(self) -> dict[str, Any]:
        stored = {
            name: asdict(mode)
            for name, mode in (("repeats", self.repeats), ("threads", self.threads),
                               ("rate", self.rate))
            if mode is not None
        }  # fmt: skip
        if stored.get("repeats", {}).get("metric") == RepeatsAuto.metric:
            del stored["repeats"]["metric"]  # the default, as plans stored it before
        return stored


# --- reading a plan's settings ---------------------------------------------------------------


def auto_from_dict(data: Mapping[str, Any] | None) -> Auto:
    """A plan's `auto` field, checked; raises InvalidInput naming the field."""
    data = data or {}
    if not isinstance(data, Mapping):
        raise InvalidInput("auto", 'must be an object such as {"repeats": {}}')
    unknown = sorted(set(data) - {"repeats", "threads", "rate", "hold"})
    if unknown:
        raise InvalidInput(
            "auto", f"unknown auto mode {unknown[0]!r}: repeats, threads, rate, hold"
        )
    if data.get("threads") is not None and data.get("rate") is not None:
        raise InvalidInput("auto", "search threads or the rate, not both in one plan")
    return Auto(
        repeats=_mode(
            data, "repeats", RepeatsAuto,
            {"target_pct": (0.1, 100), "max": (2, 100), "margin_pct": (0.1, 50)},
        ),
        threads=_mode(
            data, "threads", ThreadsAuto,
            {"max": (1, MAX_THREADS), "slo_p95_ms": (0.001, 1e7), "rise_pct": (0.1, 1000)},
        ),
        rate=_mode(
            data, "rate", RateAuto,
            {"start": (1, MAX_RATE), "max": (1, MAX_RATE), "slo_p95_ms": (0.001, 1e7),
             "tolerance_pct": (0.1, 50), "precision_pct": (1, 100)},
        ),
    )  # fmt: skip


def auto_stored(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """A plan's `auto` field checked and with its defaults, as plans and batches store it:
    the modes, and the last level's hold when it has one."""
    stored = auto_from_dict(data).to_dict()
    hold = hold_from_dict(data)
    if hold is not None:
        stored["hold"] = asdict(hold)
    return stored


def hold_from_dict(data: Mapping[str, Any] | None) -> HoldAuto | None:
    """The `hold` of a plan's `auto` field, checked: not a mode that adds runs (Auto), a
    setting of the plan's ramp, kept in the same field."""
    if not isinstance(data, Mapping):
        return None
    hold: HoldAuto | None = _mode(data, "hold", HoldAuto, {"last_level_s": (1, 86_400)})
    return hold


def _mode(
    data: Mapping[str, Any], name: str, kind: Any, bounds: dict[str, tuple[float, float]]
) -> Any:
    given = data.get(name)
    if given is None or given is False:
        return None
    if given is True:
        given = {}
    if not isinstance(given, Mapping):
        raise InvalidInput(f"auto.{name}", "must be an object of settings, or true")
    values: dict[str, Any] = {}
    for key, value in given.items():
        words = CHOICES.get(name, {}).get(key)
        if words is not None:
            if value not in words:
                raise InvalidInput(
                    f"auto.{name}.{key}", f"one of {', '.join(words)}, not {value!r}"
                )
            values[key] = value
            continue
        if key not in bounds:
            raise InvalidInput(f"auto.{name}", f"unknown setting {key!r}: {', '.join(bounds)}")
        values[key] = _number(f"auto.{name}.{key}", value, bounds[key], kind)
    mode = kind(**values)
    if name == "rate" and mode.start > mode.max:
        raise InvalidInput("auto.rate.start", f"{mode.start} is above the maximum {mode.max}")
    return mode


def _number(field: str, value: Any, bounds: tuple[float, float], kind: Any) -> float | int | None:
    whole = field.endswith((".max", ".start", ".last_level_s"))
    if value is None and field.endswith("slo_p95_ms"):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(field, f"must be a number, not {value!r}")
    if whole and value != int(value):
        raise InvalidInput(field, f"must be a whole number, not {value!r}")
    low, high = bounds
    if not low <= value <= high:
        raise InvalidInput(field, f"must be between {low:g} and {high:g}, not {value:g}")
    return int(value) if whole else float(value)
