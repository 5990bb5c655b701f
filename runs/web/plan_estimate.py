"""The plan editor's estimate of a batch: how many cells and runs, and how long they take
(sysbench's time, a little per run, the prepares, the server restarts with their warm-ups,
and what the auto modes may add). Pure: no Django, no I/O."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runs.analysis.auto import rate as rate_search
from runs.analysis.auto import threads as threads_search
from runs.analysis.auto.settings import Auto
from runs.sysbench.matrix import Cell, prepare_points, restart_points

# Added to each run's sysbench time: applying and verifying the settings, starting
# sysbench, its report; a prepare writes about this many rows a second.
RUN_OVERHEAD_S = 3.0
PREPARE_ROWS_PER_S = 50_000.0
PREPARE_OVERHEAD_S = 5.0


@dataclass(frozen=True)
class Estimate:
    cells: int
    runs: int
    sysbench_s: float | None  # None when a run is bounded by events, not time
    total_s: float | None
    prepares: int = 0  # data sets prepared: one per shared data set, one per rebuilt run
    prepare_s: float = 0.0
    restarts: int = 0  # server restarts, the put-back at the end included
    restart_s: float = 0.0  # their time, with the warm-ups after them
    restart_each_s: float = 0.0  # one restart's measured seconds
    restart_source: str = ""  # where that figure comes from
    restarts_exact: bool = True  # False: the order of a seed drawn at launch may differ
    warmups: int = 0  # the warm-ups after the restarts (none after the put-back)
    warm_s: int = 0  # each one's seconds
    # with auto modes: the runs they may add at most, and the time then
    most_runs: int = 0
    most_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        most_runs = max(self.most_runs, self.runs)
        most_s = self.most_s if most_runs > self.runs else self.total_s
        return {
            "cells": self.cells,
            "runs": self.runs,
            "prepares": self.prepares,
            "prepare_s": self.prepare_s,
            "prepare_text": duration_text(self.prepare_s),
            "sysbench_s": self.sysbench_s,
            "total_s": self.total_s,
            "total_text": duration_text(self.total_s),
            "restarts": self.restarts,
            "restart_s": self.restart_s,
            "restart_text": duration_text(self.restart_s) if self.restarts else "",
            "restart_each_s": self.restart_each_s,
            "restart_source": self.restart_source,
            "restarts_exact": self.restarts_exact,
            "warmups": self.warmups,
            "warm_s": self.warm_s,
            "most_runs": most_runs,
            "most_s": most_s,
            "most_text": duration_text(most_s),
        }


def estimate(
    cells: Sequence[Cell],
    dataset_policy: str,
    auto: Auto | None = None,
    restarts: Mapping[str, Any] | None = None,
    servers: Mapping[str, Any] | None = None,
) -> Estimate:
    """How long a batch of these cells would take: sysbench's time, plus a little per
    run, plus the prepares of the data sets (about PREPARE_ROWS_PER_S rows a second),
    plus the server restarts (`restarts`: their number and seconds, counted over the
    matrix's restart points with a measured restart time of the engine, and the warm-ups
    after them that `servers`, the plan's, asks for); with auto
    modes, also the most they may take as they add runs (an auto batch estimated at 17 s
    took 160 s when only its first runs were counted)."""
    durations = [_duration(cell.options) for cell in cells]
    sysbench_s = None if None in durations else float(sum(d for d in durations if d))
    policy = "fresh" if dataset_policy == "fresh" else "shared"
    prepares = [] if dataset_policy == "existing" else prepare_points(cells, policy)
    by_position = {cell.position: cell for cell in cells}
    prepare_s = sum(_prepare_s(by_position[p].options) for p in prepares)
    total_s = None
    if sysbench_s is not None:
        total_s = sysbench_s + RUN_OVERHEAD_S * len(cells) + prepare_s
    restart_s = float((restarts or {}).get("seconds") or 0)
    if total_s is not None:
        total_s += restart_s
    cold = (servers or {}).get("after_restart") == "cold"
    warmups = len(restart_points(cells)) if (restarts or {}).get("restarts") and not cold else 0
    added = _auto_added(cells, auto) if auto is not None and auto.any else []
    added_s = [None if d is None else d + RUN_OVERHEAD_S for d in added]
    most_s = None
    if total_s is not None and None not in added_s:
        most_s = total_s + sum(d for d in added_s if d is not None)
    return Estimate(
        cells=len({cell.key() for cell in cells}),
        runs=len(cells),
        sysbench_s=sysbench_s,
        total_s=total_s,
        prepares=len(prepares),
        prepare_s=prepare_s,
        restarts=int((restarts or {}).get("restarts") or 0),
        restart_s=restart_s,
        restart_each_s=float((restarts or {}).get("each_s") or 0),
        restart_source=str((restarts or {}).get("each_source") or ""),
        restarts_exact=bool((restarts or {}).get("exact", True)),
        warmups=warmups,
        warm_s=int((servers or {}).get("warm_s") or 10) if warmups else 0,
        most_runs=len(cells) + len(added),
        most_s=most_s,
    )


def _auto_added(cells: Sequence[Cell], auto: Auto) -> list[float | None]:
    """The sysbench time of each run the auto modes may add at most: a search's points
    along each line (the cells alike but for the searched value), or the repeats up to
    repeats auto's maximum."""
    groups: dict[Any, list[Cell]] = {}
    searching = auto.threads is not None or auto.rate is not None
    for cell in cells:
        key = _line_key(cell) if searching else cell.key()
        groups.setdefault(key, []).append(cell)
    added: list[float | None] = []
    for members in groups.values():
        first = members[0]
        repeats = len([c for c in members if c.key() == first.key()])
        if auto.repeats is not None:
            repeats = max(repeats, auto.repeats.max)
        if auto.threads is not None:
            most = threads_search.most_runs(auto.threads, repeats)
        elif auto.rate is not None:
            most = rate_search.most_runs(auto.rate, repeats)
        else:
            most = repeats
        added += [_duration(first.options)] * max(most - len(members), 0)
    return added


def _line_key(cell: Cell) -> tuple[Any, ...]:
    options = sorted((k, str(v)) for k, v in cell.options.items() if k not in ("threads", "rate"))
    return (tuple(sorted(cell.settings.items())), tuple(options))


def _duration(options: Mapping[str, object]) -> float | None:
    time_s = float(str(options.get("time", 10)))
    return None if time_s == 0 else time_s


def _prepare_s(options: Mapping[str, object]) -> float:
    rows = int(str(options.get("tables", 1))) * int(str(options.get("table-size", 10_000)))
    return PREPARE_OVERHEAD_S + rows / PREPARE_ROWS_PER_S


def duration_text(seconds: float | None) -> str:
    """`45 s`, `12 min`, `3 h 20 min`; `unknown` for runs bounded by events."""
    if seconds is None:
        return "unknown (runs bounded by --events)"
    if seconds < 90:
        return f"{math.ceil(seconds)} s"
    minutes = math.ceil(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"
