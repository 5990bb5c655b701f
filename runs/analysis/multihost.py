"""One cell driven from several load hosts: how its load is split between them, and how
their outputs merge into the cell's.

Throughput adds up: tps, qps and error rates are summed interval by interval, aligned on
the interval clock (each host's `[ 3s ]` counts from its own start; the start skew is
recorded apart). Latency does not add up, and percentiles never average: the cell's
percentiles come from the hosts' histograms (`--histogram=on`) summed bucket by bucket,
sysbench's buckets being the same on every host. An interval's latency has no histogram
behind it, so the merged interval carries the worst host's value, an upper bound.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from runs.analysis.noise import stats
from runs.sysbench.output import IntervalSample, ParseResult, QueueSample, Report

# Report counts and rates that add up across hosts.
_SQL_SUMMED = (
    "read",
    "write",
    "other",
    "total",
    "transactions",
    "tps",
    "queries",
    "qps",
    "ignored_errors",
    "ignored_errors_per_s",
    "reconnects",
    "reconnects_per_s",
)


def split_evenly(total: int, hosts: int) -> list[int]:
    """`total` threads (or transactions per second) over `hosts` load hosts, as evenly as
    whole numbers go, the larger shares first: 5 over 2 is [3, 2]."""
    if hosts < 1:
        raise ValueError("a cell needs at least one load host")
    if total < hosts:
        raise ValueError(f"{total} cannot be split over {hosts} load hosts: give each one")
    share, extra = divmod(total, hosts)
    return [share + (1 if i < extra else 0) for i in range(hosts)]


def merge_histograms(histograms: Sequence[Sequence[tuple[float, int]]]) -> list[tuple[float, int]]:
    """The hosts' latency histograms summed bucket by bucket."""
    counts: dict[float, int] = {}
    for histogram in histograms:
        for value, count in histogram:
            counts[float(value)] = counts.get(float(value), 0) + int(count)
    return sorted(counts.items())


def merge_intervals(per_host: Sequence[Sequence[IntervalSample]]) -> list[IntervalSample]:
    """The cell's interval samples: at each tick of the interval clock that every host
    reported, the hosts' rates summed and the worst host's latency."""
    by_time = [{s.time_s: s for s in samples} for samples in per_host]
    common = set(by_time[0]).intersection(*by_time[1:]) if by_time else set()
    return [merge_tick([host[t] for host in by_time]) for t in sorted(common)]


def merge_tick(samples: Sequence[IntervalSample]) -> IntervalSample:
    """One tick of the interval clock, every host's sample of it summed."""
    latencies = [s.latency_ms for s in samples if s.latency_ms is not None]
    return IntervalSample(
        time_s=samples[0].time_s,
        threads=sum(s.threads for s in samples),
        tps=_sum(s.tps for s in samples),
        qps=_sum(s.qps for s in samples),
        reads=_sum(s.reads for s in samples),
        writes=_sum(s.writes for s in samples),
        other=_sum(s.other for s in samples),
        latency_pct=samples[0].latency_pct,
        latency_ms=max(latencies) if latencies else None,
        errors_per_s=_sum(s.errors_per_s for s in samples),
        reconnects_per_s=_sum(s.reconnects_per_s for s in samples),
        eps=_sum(s.eps for s in samples),
        extra={
            key: sum(s.extra.get(key, 0.0) for s in samples)
            for key in sorted({k for s in samples for k in s.extra})
        },
    )


def _sum(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def merge_queues(per_host: Sequence[Sequence[QueueSample]]) -> list[QueueSample]:
    """`--rate` queue lines: the cell's queue is every host's queue together."""
    by_time = [{q.time_s: q for q in queues} for queues in per_host]
    common = set(by_time[0]).intersection(*by_time[1:]) if by_time else set()
    return [
        QueueSample(
            time_s=t,
            queue_length=sum(host[t].queue_length for host in by_time),
            concurrency=sum(host[t].concurrency for host in by_time),
        )
        for t in sorted(common)
    ]


def merge_reports(reports: Sequence[Report]) -> Report:
    """The cell's report from the hosts' final (or checkpoint) reports."""
    histogram = merge_histograms([r.histogram for r in reports])
    merged = Report(checkpoint_s=reports[0].checkpoint_s, histogram=histogram)
    for key in _SQL_SUMMED:
        values = [r.sql[key] for r in reports if key in r.sql]
        if values:
            merged.sql[key] = sum(values)
    merged.general = _merge_general(reports)
    merged.latency = _merge_latency(reports, histogram)
    unfinished = [r.unfinished_transactions for r in reports if r.unfinished_transactions]
    merged.unfinished_transactions = sum(unfinished) if unfinished else None
    return merged


def _merge_general(reports: Sequence[Report]) -> dict[str, float]:
    general: dict[str, float] = {}
    times = [r.general["total_time_s"] for r in reports if "total_time_s" in r.general]
    if len(times) == len(reports):
        general["total_time_s"] = max(times)
    for key in ("total_events", "events_per_s"):
        values = [r.general[key] for r in reports if key in r.general]
        if values:
            general[key] = sum(values)
    return general


def _merge_latency(
    reports: Sequence[Report], histogram: list[tuple[float, int]]
) -> dict[str, float]:
    latency: dict[str, float] = {}
    lows = [r.latency["min"] for r in reports if "min" in r.latency]
    highs = [r.latency["max"] for r in reports if "max" in r.latency]
    sums = [r.latency["sum"] for r in reports if "sum" in r.latency]
    events = sum(r.general.get("total_events", 0.0) for r in reports)
    if lows:
        latency["min"] = min(lows)
    if highs:
        latency["max"] = max(highs)
    if sums:
        latency["sum"] = sum(sums)
        if events:
            latency["avg"] = sum(sums) / events
    pcts = {r.latency["percentile"] for r in reports if "percentile" in r.latency}
    if len(pcts) == 1 and histogram:
        pct = pcts.pop()
        value = stats.percentile_from_histogram(histogram, pct)
        if value is not None:
            latency["percentile"] = pct
            latency["percentile_value"] = value
    return latency


def merge_results(results: Sequence[ParseResult]) -> ParseResult:
    """The cell's result: what the hosts printed, merged. Errors of any host are the
    cell's; the outcome is an error unless every host has a complete final report."""
    finals = [r.final for r in results]
    reports = [merge_reports(finals)] if all(f is not None for f in finals) else []  # type: ignore[arg-type]
    exit_codes = [r.exit_code for r in results if r.exit_code is not None]
    return ParseResult(
        version=results[0].version,
        header=dict(results[0].header),
        samples=merge_intervals([r.samples for r in results]),
        reports=reports,
        errors=[e for r in results for e in r.errors],
        warnings=list(dict.fromkeys(w for r in results for w in r.warnings)),
        forced_shutdown=any(r.forced_shutdown for r in results),
        unrecognised_lines=sum(r.unrecognised_lines for r in results),
        exit_code=max(exit_codes, key=lambda code: (code not in (0, 2), code))
        if exit_codes
        else None,
        queue_samples=merge_queues([r.queue_samples for r in results]),
    )
