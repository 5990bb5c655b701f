"""Everything sysbench printed for one run, as the run page, the results table, the
exports, the report and the import preview say it (pure: no Django, no I/O).

The stored run keeps sysbench's reports as parsed (runs/sysbench/output.py `Report`); this
reads the last of them, the final report, with the run's outcome, histogram and server
counters, into one `RunFacts`. A forced shutdown (`--forced-shutdown` at `--time`) is a
valid result that left transactions unfinished, and sysbench prints no histogram then.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.columns import RunCounters
from runs.sysbench.errors import classify

OUTCOMES = {
    "ok": "completed",
    "forced_shutdown": "forced shutdown",
    "error": "failed",
}

# The server counters shown per transaction, when the server has them.
_PER_TRANSACTION = (
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Rows_read",
    "Innodb_data_fsyncs",
    "Innodb_os_log_fsyncs",
    "Binlog_commits",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "wal_sync",
    "wal_bytes",
    "db_tup_fetched",
    "db_xact_commit",
)
_LOG_LINE = re.compile(r"^(FATAL|ALERT): ")
_REPEATED = re.compile(r"\(last message repeated (\d+) times\)")
_ERROR_LINES = re.compile(
    r"^(?:(?:FATAL|ALERT): .*|.*\(last message repeated \d+ times\).*)$", re.M
)
# Every line errors_by_code reads, for the database to pick out of a stored log (the
# results read no raw log): valid in Python's re and PostgreSQL's regular expressions,
# with one group, matched line by line.
ERROR_LINES_PATTERN = (
    r"^((?:FATAL|ALERT): .*"
    r"|.*\(last message repeated \d+ times\).*"
    r"|Initializing worker threads\.\.\.)$"
)
_THREAD_FAILED = "' function failed: "  # `thread_run' function failed: ..."
_FORCED = "forcing shutdown"  # the shutdown's FATAL line is the outcome, not an error
_WORKERS_STARTING = "Initializing worker threads..."


@dataclass(frozen=True)
class ErrorCount:
    code: int | None
    kind: str
    count: int
    message: str  # the first line with this code, in sysbench's words
    hint: str


@dataclass
class RunFacts:
    outcome: str  # ok, forced_shutdown, error, or "" while the run has no result
    unfinished_transactions: int | None = None
    total_time_s: float | None = None
    events: float | None = None
    rates: list[tuple[str, float | None, float | None]] = field(default_factory=list)
    queries: dict[str, float] = field(default_factory=dict)  # read, write, other, total
    latency: dict[str, float] = field(default_factory=dict)  # min, avg, max, percentile...
    fairness: dict[str, float] = field(default_factory=dict)
    errors: list[ErrorCount] = field(default_factory=list)
    histogram: list[list[float]] = field(default_factory=list)  # [ms, count, share %]
    no_histogram: str = ""  # why there is none, when there is none
    per_transaction: list[tuple[str, float]] = field(default_factory=list)
    missing_counters: list[str] = field(default_factory=list)  # expected, not on this server

    @property
    def outcome_text(self) -> str:
        return outcome_text(self.outcome, self.unfinished_transactions)


def outcome_text(outcome: str, unfinished_transactions: int | None) -> str:
    """The outcome in words: "forced shutdown, 2 transactions unfinished"."""
    text = OUTCOMES.get(outcome, "no result yet")
    if outcome == "forced_shutdown" and unfinished_transactions is not None:
        n = unfinished_transactions
        text += f", {n} transaction{'s' if n != 1 else ''} unfinished"
    return text


def status_text(status: str, outcome: str, unfinished_transactions: int | None) -> str:
    """A run's status where a list of runs says it in a word, with a forced shutdown said:
    "done (forced shutdown, 200 unfinished)"."""
    if outcome != "forced_shutdown":
        return status
    unfinished = (
        "" if unfinished_transactions is None else f", {unfinished_transactions} unfinished"
    )
    return f"{status} (forced shutdown{unfinished})"


def run_facts(
    *,
    outcome: str,
    reports: Sequence[Mapping[str, Any]],
    histogram: Sequence[Sequence[float]],
    counters: Mapping[str, Any] | RunCounters | None,
    raw_log: str,
    histogram_option: object = "on",
) -> RunFacts:
    """The facts of one run from its stored outcome, reports, histogram and counters (as
    stored, or as read already: RunFigures.server_counters); `raw_log` gives the errors by
    code."""
    final = _final(reports)
    facts = RunFacts(outcome=outcome)
    if final is not None:
        _add_report(facts, final)
    facts.errors = errors_by_code(raw_log)
    facts.histogram = histogram_shares(histogram)
    if not facts.histogram:
        facts.no_histogram = no_histogram_reason(outcome, histogram_option)
    server_counters = counters if isinstance(counters, RunCounters) else RunCounters.load(counters)
    facts.per_transaction = _per_transaction(server_counters, final)
    facts.missing_counters = server_counters.missing
    return facts


def _final(reports: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    finals = [r for r in reports if r.get("checkpoint_s") is None]
    return finals[-1] if finals else None


def _add_report(facts: RunFacts, report: Mapping[str, Any]) -> None:
    sql, general = report.get("sql") or {}, report.get("general") or {}
    facts.unfinished_transactions = report.get("unfinished_transactions")
    facts.total_time_s = general.get("total_time_s")
    facts.events = general.get("total_events")
    facts.queries = {k: sql[k] for k in ("read", "write", "other", "total") if k in sql}
    facts.latency = dict(report.get("latency") or {})
    facts.fairness = dict(report.get("fairness") or {})
    facts.rates = [
        (name, sql.get(key), sql.get(rate))
        for name, key, rate in (
            ("transactions", "transactions", "tps"),
            ("queries", "queries", "qps"),
            ("ignored errors", "ignored_errors", "ignored_errors_per_s"),
            ("reconnects", "reconnects", "reconnects_per_s"),
        )
        if key in sql
    ]
    if not sql and "events_per_s" in general:
        facts.rates = [("events", general.get("total_events"), general["events_per_s"])]


# The final report's figures beyond the run's summary, as the exports name them.
REPORT_FIGURES = (
    "queries_read",
    "queries_write",
    "queries_other",
    "events_per_thread_avg",
    "events_per_thread_stddev",
    "time_per_thread_avg_s",
    "time_per_thread_stddev_s",
)
_REPORT_KEYS = {
    "queries_read": ("sql", "read"),
    "queries_write": ("sql", "write"),
    "queries_other": ("sql", "other"),
    "events_per_thread_avg": ("fairness", "events_avg"),
    "events_per_thread_stddev": ("fairness", "events_stddev"),
    "time_per_thread_avg_s": ("fairness", "exec_time_avg"),
    "time_per_thread_stddev_s": ("fairness", "exec_time_stddev"),
}


def report_figures(reports: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """REPORT_FIGURES of the final report (None where sysbench printed none)."""
    final = _final(reports) or {}
    return {
        name: (final.get(section) or {}).get(key) for name, (section, key) in _REPORT_KEYS.items()
    }


def errors_by_code(raw_log: str) -> list[ErrorCount]:
    """The FATAL and ALERT lines, counted by server error code (or kind without one)."""
    if not raw_log:
        return []  # most runs' error lines: none (a batch's results ask 200 runs)
    counts: Counter[tuple[int | None, str]] = Counter()
    first: dict[tuple[int | None, str], Any] = {}
    last: tuple[int | None, str] | None = None
    # As the parser reads it: a script not found once the workers start is out of files.
    workers_at = raw_log.find(_WORKERS_STARTING)
    for match in _ERROR_LINES.finditer(raw_log):  # a long log holds few of them
        line = match.group(0)
        repeated = _REPEATED.search(line)
        if repeated and last is not None:
            counts[last] += int(repeated.group(1))
            continue
        if not _LOG_LINE.match(line) or _FORCED in line:
            last = None
            continue
        starting = 0 <= workers_at < match.start()
        error = classify(line.split(": ", 1)[1], workers_starting=starting)
        last = None
        if error.kind == "thread_init" or _THREAD_FAILED in line:
            continue  # the consequence of the error before it, not an error of its own
        last = (error.code, error.kind)
        counts[last] += 1
        first.setdefault(last, error)
    # sysbench prints a generic line ("unable to connect", "mysql_stmt_prepare() failed")
    # before the server's error: the server's code is the error.
    coded = any(code is not None for code, _ in counts)
    return [
        ErrorCount(code, kind, n, first[(code, kind)].message, first[(code, kind)].hint)
        for (code, kind), n in counts.most_common()
        if code is not None or not coded
    ]


def histogram_shares(histogram: Sequence[Sequence[float]]) -> list[list[float]]:
    """sysbench's buckets as [ms, count, share of the requests in %]."""
    total = sum(int(row[1]) for row in histogram)
    if not total:
        return []
    return [[float(v), int(n), round(100 * int(n) / total, 4)] for v, n, *_ in histogram]


def no_histogram_reason(outcome: str, histogram_option: object = "on") -> str:
    """What to say where a latency histogram would be."""
    if outcome == "forced_shutdown":
        return (
            "sysbench prints no latency histogram on a forced shutdown (--forced-shutdown): "
            "the report's min, avg, max and percentile are all there is."
        )
    if outcome == "error":
        return "The run failed before sysbench printed its final report."
    if not outcome:
        return "The histogram comes with sysbench's final report, at the end of the run."
    if str(histogram_option).lower() in {"off", "false", "0"}:
        return (
            "This run had --histogram=off: run sysbench with --histogram=on (benchdash's default)."
        )
    return "sysbench printed no latency histogram for this run."


def _per_transaction(
    counters: RunCounters, report: Mapping[str, Any] | None
) -> list[tuple[str, float]]:
    deltas = counters.deltas
    transactions = ((report or {}).get("sql") or {}).get("transactions")
    derived = counters.transactions or transactions
    if not deltas or not derived:
        return []
    return [(name, round(deltas[name] / derived, 3)) for name in _PER_TRANSACTION if name in deltas]


@dataclass(frozen=True)
class LogLines:
    """Numbered lines of a raw log: its tail, or the lines matching a filter."""

    lines: list[tuple[int, str]]  # (line number from 1, text)
    total: int  # lines in the whole log
    complete: bool  # every line of the log is here (the filter may run in the browser)


def log_tail(raw_log: str, *, limit: int) -> LogLines:
    lines = raw_log.splitlines()
    start = max(0, len(lines) - limit)
    numbered = [(start + i + 1, text) for i, text in enumerate(lines[start:])]
    return LogLines(numbered, len(lines), start == 0)


def log_matches(raw_log: str, text: str, *, limit: int) -> LogLines:
    """The lines holding `text` (case-insensitive), the first `limit` of them."""
    wanted = text.lower()
    lines = raw_log.splitlines()
    found = [(i + 1, line) for i, line in enumerate(lines) if wanted in line.lower()]
    return LogLines(found[:limit], len(lines), len(found) <= limit)
