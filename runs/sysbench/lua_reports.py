"""A final (or checkpoint) report that a script prints through Lua. Pure.

A script that sets `sysbench.hooks.report_cumulative` gets no report from sysbench's C
code: its hook prints the whole run's figures, most often with `sysbench.report_default`
(one `[ Ts ] thds: 0 tps: ... err/s ...` line, no colon after err/s), `report_json` or
`report_csv`, in the same shape as an interval line. sysbench calls the hook after its
workers are joined, so the line says `thds: 0`; at a checkpoint it follows the
`[ Ts ] Checkpoint report:` line, and with `--histogram` the histogram. The parser tells it
from an interval by that (parser.py); this module turns the line into a Report.

The line carries rates over the time it reports, not counts: the counts are the rates times
that time, which sysbench prints rounded to the second, so they are approximate (the
report says `printed_by: "lua"`).
"""

from __future__ import annotations

from runs.sysbench.output import IntervalSample, Report

# interval sample field -> the rate key a C report's "SQL statistics:" block gives it,
# and the count it stands for over the report's time.
_RATES = (
    ("tps", "tps", "transactions"),
    ("qps", "qps", "queries"),
    ("errors_per_s", "ignored_errors_per_s", "ignored_errors"),
    ("reconnects_per_s", "reconnects_per_s", "reconnects"),
)
# per-operation rates of the line (r/w/o), as counts like the C report's read/write/other
_OPERATIONS = (("reads", "read"), ("writes", "write"), ("other", "other"))


def report_of_line(sample: IntervalSample, *, checkpoint_s: float | None, since_s: float) -> Report:
    """The report a Lua report hook printed as one interval-shaped line (or JSON/CSV).
    `since_s`: when the time it covers began (the last checkpoint's, else 0): sysbench
    resets its counters at a checkpoint, so its rates cover only the time after it."""
    report = Report(checkpoint_s=checkpoint_s, printed_by="lua")
    seconds = sample.time_s - since_s
    for field, rate_key, count_key in _RATES:
        rate = getattr(sample, field)
        if rate is None:
            continue
        report.sql[rate_key] = rate
        if seconds > 0:
            report.sql[count_key] = round(rate * seconds)
    if seconds > 0:
        for field, count_key in _OPERATIONS:
            rate = getattr(sample, field)
            if rate is not None:
                report.sql[count_key] = round(rate * seconds)
    # The mix of a TPC-C script that prints one (no/pt/os/dl/sl per second).
    report.sql.update(sample.extra)
    if sample.eps is not None:
        report.general["events_per_s"] = sample.eps
    if sample.latency_ms is not None and sample.latency_pct:
        report.latency["percentile"] = sample.latency_pct
        report.latency["percentile_value"] = sample.latency_ms
    report.general["total_time_s"] = sample.time_s
    return report
