"""Which of a batch's series are set against which, their verdicts cell by cell, and the
verdicts in sentences.

Every series is set against the baseline but those apart from it by their offered rate
alone (a rate plan answers with the rate sustained, not with a verdict). Where an axis has
more than two values, two series beside the baseline that differ in that axis alone are
also set against each other (configs b1e1, b0e1, b0e0: b0e0 against b0e1). All of them
are judged cell by cell (noise/verdicts.py) as one family, corrected together (Holm), and
said in the plan's order: the baseline's first, then the pairs beside it.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from runs.analysis.auto.rounds import RATE
from runs.analysis.noise import verdicts
from runs.analysis.noise.verdicts import Verdict
from runs.analysis.results import RunFigures
from runs.analysis.series import Series

MANY_THREADS = 3  # beyond this many thread counts, a series is summed up in one sentence


# --- which series against which ------------------------------------------------------------


def offered_rates(series: Sequence[Series], baseline_key: str) -> set[str]:
    """The series that differ from the baseline by their offered rate alone: a rate plan's
    answer is what rate is sustained (the search, the achieved-vs-offered chart), not
    that 8,000 offered is 8x faster than 1,000 offered; no verdict, no why between them."""
    baseline = next((s for s in series if s.key == baseline_key), None)
    if baseline is None:
        return set()
    return {s.key for s in series if s.key != baseline_key and _only_rate_differs(s, baseline)}


def _only_rate_differs(series: Series, baseline: Series) -> bool:
    # Offered rates are compared in the rate charts and the search's conclusion, not here.
    without = {k: v for k, v in series.options.items() if k != RATE}
    base = {k: v for k, v in baseline.options.items() if k != RATE}
    same_cell = series.settings == baseline.settings and series.axes == baseline.axes
    return same_cell and without == base


def axis_pairs(
    series: Sequence[Series], baseline_key: str, offered: set[str]
) -> list[tuple[str, str]]:
    """The pairs the baseline's verdicts leave out where an axis has more than two values
    (configs b1e1, b0e1, b0e0: b0e0 against b0e1): two series beside the baseline that
    differ in that axis alone, each (earlier, later) in the plan's order. Two series apart
    on two axes are not paired (which one moved it?), nor offered rates (the rate charts
    say those)."""
    values = [_axis_values(s) for s in series]
    seen: dict[str, set[str]] = {}
    for found in values:
        for name, value in found.items():
            seen.setdefault(name, set()).add(value)
    many = {name for name, found in seen.items() if len(found) > 2 and name != f"o:{RATE}"}
    skipped = {baseline_key, *offered}
    pairs = []
    for i, first in enumerate(series):
        for j in range(i + 1, len(series)):
            if first.key in skipped or series[j].key in skipped:
                continue
            names = values[i].keys() | values[j].keys()
            apart = {n for n in names if values[i].get(n) != values[j].get(n)}
            if len(apart) == 1 and apart <= many:
                pairs.append((first.key, series[j].key))
    return pairs


def _axis_values(s: Series) -> dict[str, str]:
    # a setting and an option of one name are two axes
    return {
        **{f"s:{k}": v for k, v in s.settings.items()},
        **{f"o:{k}": v for k, v in s.options.items()},
        **{f"a:{k}": v for k, v in s.axes.items()},
    }


# --- the verdicts, cell by cell -----------------------------------------------------------


def cell_verdicts(runs: Iterable[RunFigures], baseline_key: str) -> dict[str, dict[int, Verdict]]:
    """series key → threads → the verdict of that cell against the baseline's, corrected
    for the number of cells tested (Holm)."""
    found = batch_verdicts(runs, baseline_key)
    return {other: by_threads for (_, other), by_threads in found.items()}


def batch_verdicts(
    runs: Iterable[RunFigures], baseline_key: str, pairs: Sequence[tuple[str, str]] = ()
) -> dict[tuple[str, str], dict[int, Verdict]]:
    """(base key, other key) → threads → the verdict of `other`'s cell against `base`'s:
    every series against the baseline, then each of `pairs` (two series beside the
    baseline), all corrected together (Holm): what the page states is one family."""
    runs = list(runs)
    keys = list(dict.fromkeys(run.series_key for run in runs))
    against = [(baseline_key, key) for key in keys if key != baseline_key]
    return pair_verdicts(runs, [*against, *pairs], noun="comparison" if pairs else "cell")


def pair_verdicts(
    runs: Iterable[RunFigures], pairs: Sequence[tuple[str, str]], *, noun: str = "cell"
) -> dict[tuple[str, str], dict[int, Verdict]]:
    """(base key, other key) → threads → the verdict of `other`'s cell against `base`'s,
    corrected for the number tested (Holm), the correction named over so many `noun`s."""
    cells: dict[str, dict[int, list[RunFigures]]] = {}
    for run in runs:
        cells.setdefault(run.series_key, {}).setdefault(run.threads, []).append(run)
    result: dict[tuple[str, str], dict[int, Verdict]] = {}
    for pair in pairs:
        base = cells.get(pair[0], {})
        for threads, members in cells.get(pair[1], {}).items():
            verdict = verdicts.compare_runs(base.get(threads, []), members)
            if verdict is not None:
                result.setdefault(pair, {})[threads] = verdict
    places = [(pair, threads) for pair, by_threads in result.items() for threads in by_threads]
    found = verdicts.corrected([result[p][t] for p, t in places], noun=noun)
    for (pair, threads), verdict in zip(places, found, strict=True):
        result[pair][threads] = verdict
    return result


def in_plan_order(
    found: Mapping[tuple[str, str], dict[int, Verdict]], series: Sequence[Series], baseline: str
) -> dict[tuple[str, str], dict[int, Verdict]]:
    """The baseline's verdicts first, then the pairs beside it, each in the plan's order."""
    rank = {s.key: i for i, s in enumerate(series)}

    def place(pair: tuple[str, str]) -> tuple[bool, int, int]:
        return (pair[0] != baseline, rank.get(pair[1], len(rank)), rank.get(pair[0], len(rank)))

    return {pair: found[pair] for pair in sorted(found, key=place)}


# --- in sentences --------------------------------------------------------------------------


def summary_sentences(
    series: Sequence[Series], baseline_key: str, cell_verdicts: Mapping[str, Mapping[int, Verdict]]
) -> list[str]:
    baseline = next((s for s in series if s.key == baseline_key), None)
    if baseline is None:
        return []
    sentences = []
    for s in series:
        found = cell_verdicts.get(s.key)
        if s.key == baseline_key or not found or _only_rate_differs(s, baseline):
            continue
        if len(found) <= MANY_THREADS:
            sentences += [
                verdicts.sentence(s.label, baseline.label, t, v) for t, v in sorted(found.items())
            ]
        else:
            sentences.append(_summed_up(s.label, baseline.label, found))
    return sentences


def pair_sentences(
    pairs: Mapping[tuple[str, str], Mapping[int, Verdict]], labels: Mapping[str, str]
) -> list[str]:
    """The pairs beside the baseline in sentences, as the baseline's are said."""
    sentences = []
    for (base, other), found in pairs.items():
        named, against = labels.get(other, other), labels.get(base, base)
        if len(found) <= MANY_THREADS:
            sentences += [verdicts.sentence(named, against, t, v) for t, v in sorted(found.items())]
        else:
            sentences.append(_summed_up(named, against, found))
    return sentences


def _summed_up(label: str, base: str, found: Mapping[int, Verdict]) -> str:
    """One sentence for a long series: its largest significant difference, and a tally."""
    significant = {t: v for t, v in found.items() if v.significant and v.ratio}
    tally = _tally(found)
    if not significant:
        return f"{label} against {base}: {tally}"
    threads = max(significant, key=lambda t: abs(math.log(significant[t].ratio or 1)))
    return f"{verdicts.sentence(label, base, threads, significant[threads])}; {tally}"


def _tally(found: Mapping[int, Verdict]) -> str:
    counts: dict[str, int] = {}
    for verdict in found.values():
        counts[verdict.verdict] = counts.get(verdict.verdict, 0) + 1
    parts = [f"{word} at {n} of {len(found)} thread counts" for word, n in counts.items()]
    return ", ".join(parts)
