"""The summary of one run, from what sysbench printed (pure: no Django, no I/O).

The headline figures come from sysbench's own report covering the steady state (the
final report; after a warmup checkpoint it covers only the time after the warmup). The
spread of the interval tps after the warmup is added, because one mean hides how stable
a run was.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from runs.analysis.noise import stats
from runs.sysbench.parser import ParseResult, Report

# sysbench report keys → summary keys
_SQL = {
    "transactions": "transactions",
    "tps": "tps",
    "queries": "queries",
    "qps": "qps",
    "ignored_errors": "errors",
    "reconnects": "reconnects",
}
_LATENCY = {"min": "latency_min_ms", "avg": "latency_avg_ms", "max": "latency_max_ms"}
# A TPC-C script's mix over the run, when its Lua final report prints it (analysis/tpcc.py).
_MIX = (
    "new_order_per_s",
    "payment_per_s",
    "order_status_per_s",
    "delivery_per_s",
    "stock_level_per_s",
)
# fileio and memory: throughput and operation rates, as 1.0 prints them (0.4 derived)
_NON_SQL = (
    "file_reads_per_s",
    "file_writes_per_s",
    "file_fsyncs_per_s",
    "read_mib_per_s",
    "written_mib_per_s",
    "mib_per_s",
    "operations_per_s",
)


def summarise(result: ParseResult, *, warmup_s: float) -> dict[str, Any]:
    steady_tps = [s.tps for s in result.samples if s.tps is not None and s.time_s > warmup_s]
    return summary_of(
        result,
        warmup_s=warmup_s,
        interval_tps=stats.describe(steady_tps) if steady_tps else None,
        samples=len(result.samples),
    )


def summary_of(
    result: ParseResult, *, warmup_s: float, interval_tps: stats.Spread | None, samples: int
) -> dict[str, Any]:
    """The summary, with the spread of the steady interval tps and the number of samples
    given: a log import gets them from the samples it stored, not from the parse."""
    summary: dict[str, Any] = {"outcome": result.outcome, "warmup_s": warmup_s}
    report = result.steady
    if report is not None:
        summary.update(_report_figures(report))
        summary["steady_after_checkpoint"] = any(r.checkpoint_s is not None for r in result.reports)
    summary["interval_tps"] = dataclasses.asdict(interval_tps) if interval_tps else None
    summary["samples"] = samples
    summary.update(_interval_answers(result, warmup_s))
    return summary


def _interval_answers(result: ParseResult, warmup_s: float) -> dict[str, Any]:
    """What verdicts and the rate search read: batch means of the steady interval rates
    (how two single runs are compared), and how long sysbench's --rate queue grew."""
    figures: dict[str, Any] = {}
    rates = [
        rate
        for s in result.samples
        if s.time_s > warmup_s and (rate := s.tps if s.tps is not None else s.eps) is not None
    ]
    if rates:
        figures["interval_batch_means"] = [round(m, 3) for m in stats.batch_means(rates)]
    queue = [q for q in result.queue_samples if q.time_s > warmup_s]
    if queue:
        figures["queue_length_max"] = max(q.queue_length for q in queue)
        figures["queue_length_last"] = queue[-1].queue_length
        if len(queue) >= 2:  # a queue still growing at the end does not keep up
            early = queue[: len(queue) // 2]
            figures["queue_length_early_max"] = max(q.queue_length for q in early)
        figures["concurrency_max"] = max(q.concurrency for q in queue)
        figures.update(_queue_stalls([q.queue_length for q in queue]))
    return figures


def _queue_stalls(lengths: list[int]) -> dict[str, int]:
    """The queue that lasted: a one-second spike (a checkpoint, a neighbour's burst) is not
    a rate out of reach, so a stall counts only if it lasts more than one interval: the
    longest queue held over two consecutive intervals, and the queue of the interval before
    the last (a queue growing at the end counts if it was already building then). A single
    interval cannot tell, and counts as it is."""
    if len(lengths) < 2:
        return {"queue_stall_max": lengths[0]}
    held = [min(a, b) for a, b in itertools.pairwise(lengths)]
    return {"queue_stall_max": max(held), "queue_length_before_last": lengths[-2]}


def _report_figures(report: Report) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for key, name in _SQL.items():
        if key in report.sql:
            figures[name] = report.sql[key]
    for key, name in _LATENCY.items():
        if key in report.latency:
            figures[name] = report.latency[key]
    if "percentile_value" in report.latency:
        figures["latency_pct"] = report.latency.get("percentile")
        figures["latency_pct_ms"] = report.latency["percentile_value"]
    figures["total_time_s"] = report.general.get("total_time_s")
    figures["events"] = report.general.get("total_events")
    if "events_per_s" in report.general:
        figures["eps"] = report.general["events_per_s"]
    figures.update({k: report.general[k] for k in _NON_SQL if k in report.general})
    if report.unfinished_transactions is not None:
        figures["unfinished_transactions"] = report.unfinished_transactions
    if report.printed_by != "sysbench":
        # A script's Lua hook printed it: rates over whole seconds, counts derived from them.
        figures["final_report"] = report.printed_by
        figures.update({k: report.sql[k] for k in _MIX if k in report.sql})
    return figures
