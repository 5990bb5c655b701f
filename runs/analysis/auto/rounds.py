"""A round of a batch's automatic modes: applied to its runs so far, once the queued ones
have run, they give the cells to add next, each with the reason it runs, and what each
mode found, in words (what each mode tries next is in repeats.py, threads.py and
rate.py).

Repeats come first: a search reads medians, so it waits until the cells it would read
are clear enough (or at their maximum of repeats). Then each line of the matrix (its
settings and option values, the searched dimension aside) takes its next probe.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runs.analysis.auto import rate as rate_search
from runs.analysis.auto import repeats as repeats_auto
from runs.analysis.auto import threads as threads_search
from runs.analysis.auto.cells import (
    CellFigures,
    Probe,
    cell_figures,
    half_width_pct,
    line_label,
    threads_text,
)
from runs.analysis.auto.settings import Auto, RateAuto, RepeatsAuto
from runs.analysis.results import RunFigures, series_key, series_label, throughput_unit

RATE = "rate"


@dataclass(frozen=True)
class NewCell:
    """Runs to add: one cell (settings, option-axis values, threads), some repeats, on the
    test, target, install and config of the cell it extends (`extends`, its key)."""

    settings: dict[str, str]
    options: dict[str, str]
    threads: int
    repeats: int
    reason: str
    extends: str = ""


def next_cells(
    auto: Auto, runs: Sequence[RunFigures], plan_repeats: int, baseline: str = ""
) -> list[NewCell]:
    """What to run next; empty when every auto mode has its answer. `baseline`: the key of
    the baseline series, whose cells the others' repeats are compared with."""
    if auto.repeats is not None:
        more = _more_repeats(auto.repeats, runs, baseline)
        if more:
            return more
    if auto.threads is None and auto.rate is None:
        return []
    repeats = auto.start_repeats(plan_repeats)
    cells = []
    for line in _lines(runs, auto).values():
        for probe in _probes(auto, line.points):
            if probe.value is None:
                continue
            threads = probe.value if auto.threads else line.first.threads
            options = dict(line.first.axis_options)
            if auto.rate:
                options[RATE] = str(probe.value)
            count = probe.repeats or repeats
            cells.append(
                NewCell(
                    dict(line.first.settings), options, threads, count, probe.reason,
                    extends=line.first.cell_key,
                )
            )  # fmt: skip
    return cells


def _more_repeats(auto: RepeatsAuto, runs: Sequence[RunFigures], baseline: str) -> list[NewCell]:
    cells = _cells(runs)
    compared = baseline and any(key != baseline for key, _ in cells)
    more, behind = [], set()
    for (key, threads), members in cells.items():
        base = cells.get((baseline, threads)) if compared else None
        if key == baseline and base is not None:
            continue  # the baseline's cells grow with the cells compared with them
        base_cell = cell_figures(base) if base is not None else None
        reason = repeats_auto.repeat_reason(
            cell_figures(members), auto, cell_label(members[0]), base_cell
        )
        if reason:
            more.append(_one_more(members[0], reason))
            if base is not None:
                behind.add(threads)
    for threads in sorted(behind):
        members = cells[(baseline, threads)]
        if len(members) < auto.max:
            label = cell_label(members[0])
            reason = f"repeat {len(members) + 1} of {label}: the baseline of undecided cells"
            more.append(_one_more(members[0], reason))
    return more


def _one_more(run: RunFigures, reason: str) -> NewCell:
    return NewCell(
        dict(run.settings), dict(run.axis_options), run.threads, 1, reason, extends=run.cell_key
    )


def conclusions(auto: Auto, runs: Sequence[RunFigures], baseline: str = "") -> list[str]:
    """What the auto modes found, one sentence per line of the matrix (or per cell)."""
    found = []
    if auto.threads is not None:
        unit = throughput_unit(runs)
        for line in _lines(runs, auto).values():
            knee = threads_search.knee_conclusion(line.points, auto.threads, unit)
            found.append(f"{line.label}: {knee}")
    if auto.rate is not None:
        for line in _lines(runs, auto).values():
            found.append(f"{line.label}: {rate_search.rate_conclusion(line.points, auto.rate)}")
    if auto.repeats is not None:
        stops = repeats_stops(auto.repeats, runs, baseline)
        found += _stop_conclusions(auto.repeats, stops) if stops else []
        found += _noise_conclusions(
            auto.repeats, runs, skip={(str(s["series_key"]), int(str(s["threads"]))) for s in stops}
        )
    return found


def offered_rates(runs: Sequence[RunFigures]) -> list[str]:
    """A plan with a `rate` axis but no rate search: what each line (settings, options but
    the rate, threads) sustained of the rates offered, judged as the search judges a
    point (rate.offered_conclusion); empty without a rate axis."""
    judged_as = Auto(rate=RateAuto())
    return [
        f"{line.label}: {rate_search.offered_conclusion(line.points, RateAuto())}"
        for line in _lines(runs, judged_as).values()
    ]


def fixed_rate(runs: Sequence[RunFigures], rate: int) -> list[str]:
    """A plan with a fixed `rate` option (no axis, no search): whether each cell held it,
    judged as the search judges a rate (rate.fixed_conclusion)."""
    judged = RateAuto()
    return [
        f"{cell_label(members[0])}: "
        f"{rate_search.fixed_conclusion(rate, cell_figures(members), judged)}"
        for members in _cells(runs).values()
    ]


def repeats_stops(
    auto: RepeatsAuto, runs: Sequence[RunFigures], baseline: str
) -> list[dict[str, object]]:
    """Why each cell compared with the baseline stopped repeating: series, series_key,
    threads, repeats, why (`decided faster after 3 repeats (p = ...)`)."""
    cells = _cells(runs)
    stops: list[dict[str, object]] = []
    for (key, threads), members in cells.items():
        base = cells.get((baseline, threads))
        if key == baseline or base is None:
            continue
        cell = cell_figures(members)
        why = repeats_auto.stopped_why(cell, auto, cell_figures(base))
        stops.append({"series": cell_label(members[0]), "series_key": key, "threads": threads,
                      "repeats": len(cell.values), "why": why})  # fmt: skip
    return stops


def _stop_conclusions(auto: RepeatsAuto, stops: list[dict[str, object]]) -> list[str]:
    decided = sum(1 for s in stops if str(s["why"]).startswith(("decided", "equivalent")))
    head = (
        f"repeats: {decided} of {len(stops)} comparisons with the baseline decided "
        f"(each look at {repeats_auto.ALPHA:g} / {repeats_auto.looks(auto)}: "
        f"{repeats_auto.RULE}; equivalence margin ±{auto.margin_pct:g} %)"
    )
    return [head, *(f"{s['series']}: {s['why']}" for s in stops)]


def _noise_conclusions(
    auto: RepeatsAuto, runs: Sequence[RunFigures], skip: set[tuple[str, int]]
) -> list[str]:
    noisy, clear = [], 0
    for place, members in _cells(runs).items():
        if place in skip:
            continue
        cell = cell_figures(members)
        noise = half_width_pct(repeats_auto.watched(cell, auto))
        if noise is not None and noise <= auto.target_pct:
            clear += 1
        else:
            noisy.append(f"{cell_label(members[0])} {repeats_auto.repeats_conclusion(cell, auto)}")
    text = f"repeats: {clear} of {clear + len(noisy)} cells within ±{auto.target_pct:g} %"
    return [text, *noisy]


def cell_label(run: RunFigures) -> str:
    named = series_label(run.settings, run.axis_options, run.cell_axes)
    return f"{named} at {threads_text(run.threads)}"


# --- grouping ------------------------------------------------------------------------------


def _cells(runs: Sequence[RunFigures]) -> dict[tuple[str, int], list[RunFigures]]:
    cells: dict[tuple[str, int], list[RunFigures]] = {}
    for run in runs:
        cells.setdefault((run.series_key, run.threads), []).append(run)
    return cells


@dataclass
class _Line:
    """The cells of one search: one per threads (or per rate) value."""

    first: RunFigures
    label: str
    points: dict[int, CellFigures]


def _lines(runs: Sequence[RunFigures], auto: Auto) -> dict[str, _Line]:
    searched = "threads" if auto.threads else RATE
    members: dict[str, dict[int, list[RunFigures]]] = {}
    firsts: dict[str, RunFigures] = {}
    for run in runs:
        value = run.threads if auto.threads else _rate(run)
        if value is None:
            continue
        key = _line_key(run, auto)
        firsts.setdefault(key, run)
        members.setdefault(key, {}).setdefault(value, []).append(run)
    lines = {
        key: _Line(
            first=firsts[key],
            label=line_label(firsts[key], searched),
            points={value: cell_figures(group) for value, group in by_value.items()},
        )
        for key, by_value in members.items()
    }
    return dict(sorted(lines.items(), key=lambda item: _natural(item[1].first)))


def _natural(run: RunFigures) -> tuple[object, ...]:
    # flush=2 before flush=10, 2 threads before 16, as the series of the charts
    values = [
        *run.cell_axes.values(), *run.settings.values(), *run.axis_options.values(),
        str(run.threads),
    ]  # fmt: skip
    return tuple((0, float(v), "") if _numeric(v) else (1, 0.0, v) for v in values)


def _numeric(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _line_key(run: RunFigures, auto: Auto) -> str:
    options = {k: v for k, v in run.axis_options.items() if k != RATE}
    # a line is one test, target, install and config too: b0e0's threads are not b1e1's
    key = series_key(run.settings, options, run.cell_axes)
    return key if auto.threads else f"{key}|{run.threads}"


def _rate(run: RunFigures) -> int | None:
    value = run.axis_options.get(RATE)
    return int(value) if value is not None and str(value).isdigit() else None


def _probes(auto: Auto, points: dict[int, CellFigures]) -> list[Probe]:
    # the threads search confirms in rounds of several cells, shuffled together
    if auto.threads is not None:
        return threads_search.threads_probes(points, auto.threads)
    assert auto.rate is not None
    return [rate_search.rate_probe(points, auto.rate)]
