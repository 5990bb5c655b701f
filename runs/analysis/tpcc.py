"""A TPC-C run as a team reads it: tpmC (NewOrder transactions per minute) beside tps, the
transaction mix, the ignored errors (deadlocks) per second, and the warehouses (pure: no
Django, no I/O).

A run is TPC-C when its script is named so (sysbench-tpcc's `tpcc.lua`, a bundle of one's
own) or when it is given warehouses (`--scale`, `--warehouses`). sysbench-tpcc's `tpcc.lua`
prints no count per transaction: its tps counts every transaction of the mix, so no tpmC
can be read from it, and this says so rather than guess one from the script's nominal mix.
Its `tpcc_counters.lua` prints each transaction's rate on every interval line
(runs/sysbench/intervals.py puts them in the sample's extra): then tpmC is the NewOrder
rate times 60.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

# The warehouses' options: sysbench-tpcc's --scale (per table set), others' --warehouses.
WAREHOUSE_OPTIONS = ("scale", "warehouses")
# The mix, in the order TPC-C names it, by the key a sample's extra holds its rate under.
MIX = (
    ("new_order_per_s", "NewOrder"),
    ("payment_per_s", "Payment"),
    ("order_status_per_s", "OrderStatus"),
    ("delivery_per_s", "Delivery"),
    ("stock_level_per_s", "StockLevel"),
)
NO_NEW_ORDERS = (
    "The script does not print its NewOrder transactions, so no tpmC: tps counts every "
    "transaction of its mix. sysbench-tpcc's tpcc_counters.lua prints them."
)


@dataclass(frozen=True)
class Interval:
    """What one interval line gives: a sample's figures."""

    tps: float | None
    errors_per_s: float | None
    extra: Mapping[str, Any]
    in_warmup: bool = False


@dataclass(frozen=True)
class MixShare:
    name: str
    per_s: float
    share: float  # of all the transactions the script counted, 0..1


@dataclass(frozen=True)
class TpccRun:
    script: str
    warehouses: int | None  # per table set (sysbench-tpcc's --scale)
    table_sets: int  # sysbench-tpcc's --tables: each set has its own warehouses
    tps: float | None
    tpmc: float | None
    errors_per_s: float | None
    mix: tuple[MixShare, ...]

    @property
    def total_warehouses(self) -> int | None:
        return None if self.warehouses is None else self.warehouses * self.table_sets

    @property
    def no_tpmc_reason(self) -> str:
        return "" if self.tpmc is not None else NO_NEW_ORDERS

    def to_json(self) -> dict[str, Any]:
        """As the API gives a run's (`GET /api/v1/runs/{id}`: `tpcc`)."""
        return {
            "script": self.script,
            "tpmc": self.tpmc,
            "no_tpmc_reason": self.no_tpmc_reason,
            "tps": self.tps,
            "errors_per_s": self.errors_per_s,
            "warehouses": self.warehouses,
            "table_sets": self.table_sets,
            "total_warehouses": self.total_warehouses,
            "mix": [{"name": m.name, "per_s": m.per_s, "share": m.share} for m in self.mix],
        }


def script_and_options(argv: Sequence[str]) -> tuple[str, dict[str, str]]:
    """The script a command runs (its file name, `.lua`) and its `--name=value` options,
    dashes as underscores."""
    script = next((a.rsplit("/", 1)[-1] for a in argv if a.endswith(".lua")), "")
    options = {}
    for arg in argv:
        name, eq, value = arg.removeprefix("--").partition("=")
        if arg.startswith("--") and eq:
            options[name.replace("-", "_")] = value
    return script, options


def is_tpcc(argv: Sequence[str]) -> bool:
    script, options = script_and_options(argv)
    return "tpcc" in script.lower() or any(name in options for name in WAREHOUSE_OPTIONS)


def tpcc_run(
    *, argv: Sequence[str], intervals: Sequence[Interval], tps: float | None = None
) -> TpccRun | None:
    """The run's TPC-C figures; None for a run that is not TPC-C. `tps` is the final
    report's when there is one; else the intervals' mean. Warmup intervals are left out."""
    if not is_tpcc(argv):
        return None
    script, options = script_and_options(argv)
    steady = [i for i in intervals if not i.in_warmup] or list(intervals)
    mix = _mix(steady)
    new_orders = next((m.per_s for m in mix if m.name == "NewOrder"), None)
    return TpccRun(
        script=script,
        warehouses=_whole(next((options[n] for n in WAREHOUSE_OPTIONS if n in options), None)),
        table_sets=_whole(options.get("tables")) or 1,
        tps=tps if tps is not None else _mean([i.tps for i in steady]),
        tpmc=None if new_orders is None else new_orders * 60,
        errors_per_s=_mean([i.errors_per_s for i in steady]),
        mix=mix,
    )


def _mix(intervals: Sequence[Interval]) -> tuple[MixShare, ...]:
    """Each transaction's mean rate, when every steady interval printed the mix."""
    if not intervals or not all(MIX[0][0] in i.extra for i in intervals):
        return ()
    rates = [(name, fmean(float(i.extra.get(key) or 0.0) for i in intervals)) for key, name in MIX]
    total = sum(rate for _, rate in rates)
    return tuple(MixShare(name, rate, rate / total if total else 0.0) for name, rate in rates)


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return fmean(known) if known else None


def _whole(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None
