"""What a batch answers, in the order people ask: a summary in sentences, a verdict for
every cell against the baseline, what the auto modes found and why each extra run ran,
the "why" of each difference, and the open-loop charts (achieved and p95 against the
offered rate). The results page, the API and the shared report read the same answers.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.analysis import auto, modes, verdicts, why
from runs.analysis.results import (
    FINISHED_WELL,
    PALETTE,
    RunFigures,
    Series,
    group_series,
    series_key,
    series_label,
)
from runs.analysis.verdicts import Verdict
from runs.frozen import FrozenPlan

RATE = auto.RATE
MANY_THREADS = 3  # beyond this many thread counts, a series is summed up in one sentence


@dataclass(frozen=True)
class Reason:
    position: int
    label: str
    status: str
    reason: str


@dataclass
class BatchAnswers:
    baseline_key: str
    summary: list[str] = field(default_factory=list)
    verdicts: dict[str, dict[int, Verdict]] = field(default_factory=dict)
    found: list[str] = field(default_factory=list)  # what the auto modes found
    reasons: list[Reason] = field(default_factory=list)  # why each extra run ran
    explanations: list[why.Why] = field(default_factory=list)
    rate_chart: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self, series: Sequence[Series]) -> dict[str, Any]:
        labels = {s.key: s.label for s in series}
        return {
            "baseline": labels.get(self.baseline_key, ""),
            "summary": self.summary,
            "verdicts": [
                {"series": labels.get(key, key), "threads": threads, **verdict.to_dict()}
                for key, by_threads in self.verdicts.items()
                for threads, verdict in sorted(by_threads.items())
            ],
            "auto": self.found,
            "extra_runs": [r.__dict__ for r in self.reasons],
            "why": [w.to_dict() for w in self.explanations],
            "rate_chart": self.rate_chart,
        }


def batch_answers(
    runs: Sequence[RunFigures],
    baseline_key: str,
    params: Mapping[str, Any],
    reasons: Mapping[int, str] | None = None,
) -> BatchAnswers:
    """Everything a batch answers. `reasons`: run id → why an auto mode added it."""
    series = group_series(runs)
    cell_verdicts = verdicts.cell_verdicts(runs, baseline_key)
    settings = modes.auto_from_dict(FrozenPlan.from_params(params).auto)
    answers = BatchAnswers(baseline_key=baseline_key, verdicts=cell_verdicts)
    answers.summary = summary_sentences(series, baseline_key, cell_verdicts)
    answers.found = auto.conclusions(settings, runs) if settings.any else []
    answers.reasons = [
        Reason(r.position, r.label, r.status, (reasons or {})[r.id])
        for r in runs
        if (reasons or {}).get(r.id)
    ]
    answers.explanations = why.pairs(_cells(runs), {s.key: s.label for s in series}, baseline_key)
    answers.rate_chart = rate_chart(runs)
    return answers


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


def _only_rate_differs(series: Series, baseline: Series) -> bool:
    # Offered rates are compared in the rate charts and the search's conclusion, not here.
    without = {k: v for k, v in series.options.items() if k != RATE}
    base = {k: v for k, v in baseline.options.items() if k != RATE}
    return series.settings == baseline.settings and without == base


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


def _cells(runs: Sequence[RunFigures]) -> dict[str, dict[int, list[RunFigures]]]:
    cells: dict[str, dict[int, list[RunFigures]]] = {}
    for run in runs:
        cells.setdefault(run.series_key, {}).setdefault(run.threads, []).append(run)
    return cells


# --- open loop: achieved and p95 against the offered rate ------------------------------------


def rate_chart(runs: Sequence[RunFigures]) -> list[dict[str, Any]]:
    """One line per series and thread count with a rate axis: for each offered rate, the
    median achieved interval rate, p95 and the longest queue; empty without a rate axis."""
    lines: dict[tuple[str, int], dict[int, list[RunFigures]]] = {}
    labels: dict[tuple[str, int], str] = {}
    for run in runs:
        rate = run.axis_options.get(RATE, "")
        if not rate.isdigit() or run.status not in FINISHED_WELL:
            continue
        options = {k: v for k, v in run.axis_options.items() if k != RATE}
        key = (series_key(run.settings, options), run.threads)
        labels[key] = f"{series_label(run.settings, options)}, {run.threads} thr"
        lines.setdefault(key, {}).setdefault(int(rate), []).append(run)
    return [
        {
            "label": labels[key],
            "colour": PALETTE[index % len(PALETTE)],
            "points": [_rate_point(rate, members) for rate, members in sorted(by_rate.items())],
        }
        for index, (key, by_rate) in enumerate(sorted(lines.items()))
    ]


def _rate_point(rate: int, runs: list[RunFigures]) -> dict[str, Any]:
    achieved = [v for r in runs if (v := (r.summary.get("interval_tps") or {}).get("median"))]
    p95 = [v for r in runs if (v := r.latency_ms) is not None]
    queues = [int(r.summary["queue_length_max"]) for r in runs if "queue_length_max" in r.summary]
    return {
        "offered": rate,
        "achieved": statistics.median(achieved) if achieved else None,
        "p95": statistics.median(p95) if p95 else None,
        "queue": max(queues) if queues else None,
    }
