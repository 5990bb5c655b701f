"""Streaming parser for sysbench's text output.

Reads sysbench 1.0 (SQL tests, cpu, fileio, memory, threads, mutex) and the older
0.5 and 0.4 logs. The worker feeds it line by line while sysbench runs: an interval
line comes back as an event from the very feed() call that received it. Pure: no
Django, no I/O, and it never raises on what sysbench (or a broken pipe) prints;
lines it cannot place are only counted.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from runs.sysbench.errors import SysbenchError, classify, is_option_error
from runs.sysbench.options import ALL_TESTS

__all__ = [
    "Event",
    "IntervalSample",
    "OutputParser",
    "ParseResult",
    "QueueSample",
    "Report",
    "SysbenchError",
    "parse_text",
    "read_command",
    "redact_secrets",
]

_N = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


def _line(pattern: str) -> re.Pattern[str]:
    """A whole-line pattern in which each space stands for any run of whitespace.

    Whole-line, so that a line cut short (a killed process, a full pipe) is not read
    as a sample carrying half a number; loose spacing, because column widths changed
    between releases.
    """
    return re.compile("^" + pattern.replace(" ", r"\s+") + "$")


@dataclass(frozen=True)
class IntervalSample:
    time_s: float
    threads: int
    tps: float | None
    qps: float | None
    reads: float | None
    writes: float | None
    other: float | None
    latency_pct: float | None
    latency_ms: float | None
    errors_per_s: float | None
    reconnects_per_s: float | None
    eps: float | None = None
    extra: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class QueueSample:
    time_s: float
    queue_length: int
    concurrency: int


Event = IntervalSample | QueueSample | SysbenchError


@dataclass
class Report:
    """One final report, or one `[ Ts ] Checkpoint report:`."""

    checkpoint_s: float | None
    sql: dict[str, float] = field(default_factory=dict)
    general: dict[str, float] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)
    fairness: dict[str, float] = field(default_factory=dict)
    histogram: list[tuple[float, int]] = field(default_factory=list)
    unfinished_transactions: int | None = None

    @property
    def complete(self) -> bool:
        # Every test prints "General statistics:"; without it the output was cut.
        return "total_time_s" in self.general

    def to_dict(self) -> dict[str, Any]:
        return {
            "checkpoint_s": self.checkpoint_s,
            "sql": dict(self.sql),
            "general": dict(self.general),
            "latency": dict(self.latency),
            "fairness": dict(self.fairness),
            "histogram": [[value, count] for value, count in self.histogram],
            "unfinished_transactions": self.unfinished_transactions,
        }


@dataclass
class ParseResult:
    version: str | None
    header: dict[str, Any]
    samples: list[IntervalSample]
    reports: list[Report]
    errors: list[SysbenchError]
    warnings: list[str]
    forced_shutdown: bool
    unrecognised_lines: int
    exit_code: int | None
    queue_samples: list[QueueSample] = field(default_factory=list)

    @property
    def final(self) -> Report | None:
        finals = [r for r in self.reports if r.checkpoint_s is None]
        return finals[-1] if finals else None

    @property
    def steady(self) -> Report | None:
        """The report to compare runs on.

        That is the final report: after a `--report-checkpoints` checkpoint sysbench
        resets its counters, so the final report covers only the time after the last
        checkpoint (the warmup is left out); without checkpoints it covers the run.
        """
        return self.final

    @property
    def primary_error(self) -> SysbenchError | None:
        """The error that best explains a failure: the server's error code wins over
        the generic "unable to connect" and "thread initialization failed" lines."""
        for error in self.errors:
            if error.code is not None:
                return error
        for error in self.errors:
            if error.kind not in ("thread_init", "other"):
                return error
        return self.errors[0] if self.errors else None

    @property
    def outcome(self) -> str:
        """One of "ok", "forced_shutdown" or "error".

        forced_shutdown: exit 2 after `--forced-shutdown`, with a complete final
        report; the results are valid. error: an error line, a failing exit code, or
        no complete final report.
        """
        final = self.final
        if self.errors or final is None or not final.complete:
            return "error"
        if self.exit_code not in (None, 0, 2):
            return "error"
        if self.forced_shutdown:
            return "forced_shutdown"
        # Exit 2 without the forced-shutdown message: worker threads failed to start in time.
        return "error" if self.exit_code == 2 else "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "header": dict(self.header),
            "samples": [asdict(s) for s in self.samples],
            "queue_samples": [asdict(q) for q in self.queue_samples],
            "reports": [r.to_dict() for r in self.reports],
            "errors": [asdict(e) for e in self.errors],
            "warnings": list(self.warnings),
            "forced_shutdown": self.forced_shutdown,
            "unrecognised_lines": self.unrecognised_lines,
            "exit_code": self.exit_code,
            "outcome": self.outcome,
        }


# ---- interval lines -------------------------------------------------------------

_INTERVAL = re.compile(rf"^\[\s*({_N})s\s*\]\s*(.*?)\s*$")
_CHECKPOINT = "Checkpoint report:"
_QUEUE = _line(r"queue length: (\d+), concurrency: (\d+)")
_LATENCY_LABEL = rf"\(ms,\s*(?P<pct>{_N})%\): (?P<lat>{_N})"
_SQL_10 = _line(
    rf"thds: (?P<threads>\d+) tps: (?P<tps>{_N}) qps: (?P<qps>{_N}) "
    rf"\(r/w/o:\s*(?P<reads>{_N})/(?P<writes>{_N})/(?P<other>{_N})\) "
    rf"lat\s*{_LATENCY_LABEL} err/s: (?P<err>{_N}) reconn/s: (?P<reconn>{_N})"
)
_EPS_10 = _line(rf"thds: (?P<threads>\d+) eps: (?P<eps>{_N}) lat\s*{_LATENCY_LABEL}")
_FILEIO_10 = _line(
    rf"reads: (?P<read>{_N}) MiB/s writes: (?P<written>{_N}) MiB/s "
    rf"fsyncs: (?P<fsyncs>{_N})/s latency\s*{_LATENCY_LABEL}"
)
_MEMORY_10 = _line(rf"(?P<mib>{_N}) MiB/sec")
# 0.5; its early builds said reads/s, writes/s and printed no errors/reconnects.
_LEGACY_05 = re.compile(
    r"^threads:\s*(?P<threads>\d+),\s*"
    rf"tps:\s*(?P<tps>{_N}),\s*"
    rf"reads(?:/s)?:\s*(?P<reads>{_N}),\s*"
    rf"writes(?:/s)?:\s*(?P<writes>{_N}),?\s*"
    rf"response time:\s*(?P<lat>{_N})ms\s*\((?P<pct>{_N})%\)"
    rf"(?:,\s*errors:\s*(?P<err>{_N}),\s*reconnects:\s*(?P<reconn>{_N}))?$"
)
_SAMPLE_FORMATS = (_SQL_10, _EPS_10, _FILEIO_10, _MEMORY_10, _LEGACY_05)
# fileio and memory print throughput, not operations per second: it goes to `extra`.
_EXTRA_GROUPS = {
    "read": "read_mib_per_s",
    "written": "written_mib_per_s",
    "fsyncs": "fsyncs_per_s",
    "mib": "mib_per_s",
}


def _opt(value: str | None) -> float | None:
    return None if value is None else float(value)


def _interval_sample(time_s: float, rest: str, threads: int) -> IntervalSample | None:
    """`threads` stands in for lines that print no thread count (fileio, memory)."""
    for pattern in _SAMPLE_FORMATS:
        m = pattern.match(rest)
        if m:
            return _sample(time_s, m.groupdict(), threads)
    return None


def _sample(time_s: float, g: dict[str, str | None], threads: int) -> IntervalSample:
    return IntervalSample(
        time_s=time_s,
        threads=int(g["threads"] or 0) if "threads" in g else threads,
        tps=_opt(g.get("tps")),
        qps=_opt(g.get("qps")),
        reads=_opt(g.get("reads")),
        writes=_opt(g.get("writes")),
        other=_opt(g.get("other")),
        latency_pct=_opt(g.get("pct")),
        latency_ms=_opt(g.get("lat")),
        errors_per_s=_opt(g.get("err")),
        reconnects_per_s=_opt(g.get("reconn")),
        eps=_opt(g.get("eps")),
        extra={key: float(g[group] or 0) for group, key in _EXTRA_GROUPS.items() if group in g},
    )


# ---- report lines ---------------------------------------------------------------

# Block header -> (section, position in a report). A block whose position is not
# after the previous one starts a new report.
_BLOCKS: dict[str, tuple[str, int]] = {
    "Latency histogram (values are in milliseconds)": ("histogram", 0),
    "SQL statistics:": ("sql", 1),
    "OLTP test statistics:": ("sql", 1),
    "CPU speed:": ("cpu", 3),
    "File operations:": ("fileio", 3),
    "Throughput:": ("throughput", 4),
    "General statistics:": ("general", 6),
    "Test execution summary:": ("general", 6),
    "Latency (ms):": ("latency", 7),
    "Threads fairness:": ("fairness", 8),
}
_UNFINISHED = re.compile(r"^Number of unfinished transactions on forced shutdown:\s*(\d+)$")
_TOTAL_OPERATIONS = re.compile(rf"^Total operations:\s*({_N})\s*\(\s*({_N}) per second\)$")
_TRANSFERRED = re.compile(rf"^({_N}) MiB transferred\s*\(\s*({_N}) MiB/sec\)$")
# 0.4 and 0.5: memory prints MB (binary megabytes, as 1.0's MiB), fileio prints its counts.
_LEGACY_OPERATIONS = re.compile(rf"^Operations performed:\s*({_N})\s*\(\s*({_N}) ops/sec\)$")
_LEGACY_TRANSFERRED = re.compile(rf"^({_N}) MB transferred\s*\(\s*({_N}) MB/sec\)$")
_LEGACY_FILE_OPERATIONS = re.compile(
    rf"^Operations performed:\s*({_N}) reads?, ({_N}) writes?, ({_N}) other = ({_N}) total$",
    re.IGNORECASE,
)
_SIZE = rf"({_N})([KMGT]?b)"
_LEGACY_FILE_BYTES = re.compile(
    rf"^Read {_SIZE}\s+Written {_SIZE}\s+Total transferred {_SIZE}\s+\(({_N})Mb/sec\)$"
)
_LEGACY_REQUESTS = re.compile(rf"^({_N}) Requests/sec executed$")
_MIB_PER_UNIT = {"b": 1 / 1024**2, "Kb": 1 / 1024, "Mb": 1.0, "Gb": 1024.0, "Tb": 1024.0**2}

_KEY_VALUE = re.compile(r"^([^:]+?):\s*(.*)$")
_COUNT_RATE = re.compile(rf"^({_N})(?:\s+\(\s*({_N}) per sec(?:\.|ond)\))?$")
_DURATION = re.compile(rf"^({_N})\s*(ms|us|s)?$")
_PAIR = re.compile(rf"^({_N})/({_N})$")
_PERCENTILE = re.compile(rf"^(?:approx\.\s+)?({_N})(?:st|nd|rd|th)?\s+percentile$")
_HISTOGRAM_ROW = re.compile(rf"^({_N})\s+\|[*\s]*?(\d+)$")
_HISTOGRAM_TITLE = re.compile(r"^value\s+-+\s*distribution\s*-+\s*count$")

# printed name -> (count key, rate key)
_SQL_FIGURES: dict[str, tuple[str, str | None]] = {
    "read": ("read", None),
    "write": ("write", None),
    "other": ("other", None),
    "total": ("total", None),
    "transactions": ("transactions", "tps"),
    "queries": ("queries", "qps"),
    "ignored errors": ("ignored_errors", "ignored_errors_per_s"),
    "reconnects": ("reconnects", "reconnects_per_s"),
    "deadlocks": ("deadlocks", "deadlocks_per_s"),
    "read/write requests": ("read_write_requests", "read_write_requests_per_s"),
    "other operations": ("other_operations", "other_operations_per_s"),
}
_GENERAL_SECONDS = {
    "total time": "total_time_s",
    "total time taken by event execution": "event_execution_time_s",
}
_GENERAL_FIGURES = {
    ("general", "total number of events"): "total_events",
    ("cpu", "events per second"): "events_per_s",
    ("fileio", "reads/s"): "file_reads_per_s",
    ("fileio", "writes/s"): "file_writes_per_s",
    ("fileio", "fsyncs/s"): "file_fsyncs_per_s",
    ("throughput", "read, MiB/s"): "read_mib_per_s",
    ("throughput", "written, MiB/s"): "written_mib_per_s",
}
_LATENCY_FIGURES = {"min": "min", "avg": "avg", "max": "max", "sum": "sum"}
_FAIRNESS_FIGURES = {
    "events (avg/stddev)": ("events_avg", "events_stddev"),
    "execution time (avg/stddev)": ("exec_time_avg", "exec_time_stddev"),
}
_LEGACY_LATENCY_TITLES = ("response time", "per-request statistics")


def _milliseconds(value: str) -> float | None:
    m = _DURATION.match(value)
    if m is None:
        return None
    scale = {"s": 1000.0, "us": 0.001}.get(m[2] or "ms", 1.0)
    return float(m[1]) * scale


def _seconds(value: str) -> float | None:
    m = _DURATION.match(value)
    if m is None:
        return None
    scale = {"ms": 0.001, "us": 0.000001}.get(m[2] or "s", 1.0)
    return float(m[1]) * scale


# ---- header and log lines -------------------------------------------------------

_VERSION = re.compile(r"^sysbench\s+(\d[\w.\-]*?):?(?:\s+(.*))?$")
_BUILD = re.compile(r"\((.*)\)")
_LOG = re.compile(r"^(FATAL|ALERT|WARNING|NOTICE|INFO|DEBUG):\s?(.*)$")
_REPEATED = re.compile(r"^\(last message repeated (\d+) times?\)$")
_FORCED_SHUTDOWN = "The --max-time limit has expired"

# Informational lines of run, prepare and cleanup, in all versions: recognised, not kept.
_INFO_PREFIXES = (
    "Running the test with following options:",
    "Initializing random number generator from",  # current time, timer
    "Random number generator seed is",
    "Extra file open flags:",
    "Number of IO requests:",
    "Read/Write ratio for combined random IO test:",
    "Periodic FSYNC enabled",
    "Calling fsync() at the end of test",
    "Calling fsync() after each write operation",
    "Using checksums validation",
    "Debug mode enabled",
    "Reporting thread started",
    "Reading the script from the standard input",
    "Using synchronous I/O mode",
    "Using asynchronous I/O mode",
    "Using mmap",
    "No DB drivers specified",
    "Running simple OLTP test",
    "Running mixed OLTP test",
    "Running nontrx OLTP test",
    "Using Uniform distribution",
    "Using Special distribution",
    "Using Gaussian distribution",
    "Skipping BEGIN/COMMIT",
    "Using auto_inc on the id column",
    "Not using auto_inc on the id column",
    "Using BEGIN for starting transactions",
    "Using LOCK TABLES for starting transactions",
    "Maximum number of requests for OLTP test is limited to",
    "Time limit exceeded, exiting...",
    "Done.",
    "Creating table ",
    "Inserting ",
    "Creating a secondary index",
    "Creating secondary indexes on",  # oltp_legacy and 0.5
    "Number of random requests for random IO:",
    "Dropping table ",
    "Creating files for the test",
    "Creating file ",
    "Removing test files",
)
_HeaderRule = tuple[re.Pattern[str], Callable[[re.Match[str]], None]]
_INFO_PATTERNS = (
    re.compile(r"^\d+ bytes written in "),
    re.compile(r"^\d+ files, \S+ each, \S+ total$"),
    re.compile(r"^Using .+ for starting transactions$"),  # 0.4: "LOCK TABLES READ", ...
)
# A sysbench command line copied into a log, after an optional shell prompt
# ("user@host:~$ ", "# ", "+ " of set -x).
_COMMAND = re.compile(r"^(?:.*?[$#>]\s+|\+\s+)?(?:time\s+)?(?:\S*/)?sysbench\s+(?P<args>.+?)\s*$")
_SECRET = re.compile(r"""(--[\w-]*password(?:=|\s+))('[^']*'|"[^"]*"|\S+)""", re.IGNORECASE)
_PHASE_WORDS = frozenset({"prepare", "run", "cleanup", "help", "warmup", "prewarm"})
# Legacy and oltp_legacy option names -> their 1.0 names.
_OPTION_ALIASES = {
    "num-threads": "threads",
    "max-time": "time",
    "max-requests": "events",
    "oltp-tables-count": "tables",
    "oltp-table-size": "table-size",
    "tx-rate": "rate",
}
_LEGACY_TESTS = frozenset({"oltp", "select", "insert", "delete", "parallel_prepare", "oltp_simple"})
_MEMORY_HEADER = re.compile(
    r"^Memory (block size|transfer size|operations type|scope type|access mode):\s*(.+)$"
)
_MEMORY_KEYS = {
    "block size": "block_size",
    "transfer size": "total_size",
    "total size": "total_size",
    "operations type": "operation",
    "operation": "operation",
    "scope type": "scope",
    "scope": "scope",
    "access mode": "access_mode",
}


class OutputParser:
    """Feed sysbench's output one line at a time; events come back as lines complete them.

    An interval or queue line comes back from the feed() call that received it. An
    error line comes back with the next line (a libpq message continues over
    tab-indented lines) or, at the end, in finish()'s result. Each distinct error is
    reported once: sysbench repeats it for every thread.
    """

    def __init__(self) -> None:
        self._version: str | None = None
        self._header: dict[str, Any] = {}
        self._samples: list[IntervalSample] = []
        self._queue: list[QueueSample] = []
        self._reports: list[Report] = []
        self._errors: list[SysbenchError] = []
        self._error_keys: set[tuple[str, str]] = set()
        self._warnings: list[str] = []
        self._forced_shutdown = False
        self._unrecognised = 0
        self._report: Report | None = None  # the report being read, until its last line
        self._block = -1  # position of the last block read in that report
        self._section: str | None = None
        self._pending_error: tuple[str, bool] | None = None
        self._seen_output = False
        self._workers_starting = False
        self._header_rules = self._build_header_rules()

    def feed(self, line: str) -> list[Event]:
        events: list[Event] = []
        try:
            self._feed(line, events)
        except Exception:  # whatever sysbench prints must not stop the worker
            self._unrecognised += 1
        return events

    def finish(self, exit_code: int | None) -> ParseResult:
        self._flush_error([])
        for report in self._reports:
            _derive_legacy_queries(report)
            _derive_legacy_fileio(report)
        return ParseResult(
            version=self._version,
            header=dict(self._header),
            samples=list(self._samples),
            reports=list(self._reports),
            errors=list(self._errors),
            warnings=list(self._warnings),
            forced_shutdown=self._forced_shutdown,
            unrecognised_lines=self._unrecognised,
            exit_code=exit_code,
            queue_samples=list(self._queue),
        )

    # -- dispatch --

    def _feed(self, line: str, events: list[Event]) -> None:
        text = line.rstrip("\r\n")
        if self._pending_error is not None and text.startswith("\t"):
            message, starting = self._pending_error
            self._pending_error = (f"{message}\n{text}", starting)
            return
        self._flush_error(events)
        stripped = text.strip()
        if not stripped:
            self._section = None  # blocks end at a blank line (the histogram at " ")
            return
        if not self._seen_output and stripped.startswith("# source:"):
            return  # provenance comment on top of a stored legacy log
        self._seen_output = True
        if not (
            self._interval_line(stripped, events)
            or self._log_line(stripped)
            or self._report_line(text, stripped)
            or self._header_line(text, stripped)
        ):
            self._unrecognised += 1

    def _flush_error(self, events: list[Event]) -> None:
        if self._pending_error is None:
            return
        message, starting = self._pending_error
        self._pending_error = None
        error = classify(message, workers_starting=starting)
        key = (error.kind, error.message)
        if key in self._error_keys:
            return
        self._error_keys.add(key)
        self._errors.append(error)
        events.append(error)

    # -- interval lines --

    def _interval_line(self, stripped: str, events: list[Event]) -> bool:
        m = _INTERVAL.match(stripped)
        if m is None:
            return False
        time_s, rest = float(m[1]), m[2]
        if rest == _CHECKPOINT:
            self._start_report(time_s)
            return True
        queue = _QUEUE.match(rest)
        if queue:
            queue_sample = QueueSample(time_s, int(queue[1]), int(queue[2]))
            self._queue.append(queue_sample)
            events.append(queue_sample)
            return True
        sample = _interval_sample(time_s, rest, int(self._header.get("threads", 0)))
        if sample is None:
            return False
        self._note_percentile(sample.latency_pct)
        self._samples.append(sample)
        events.append(sample)
        return True

    def _note_percentile(self, percentile: float | None) -> None:
        if percentile is not None:
            self._header.setdefault("percentile", percentile)

    # -- log lines --

    def _log_line(self, stripped: str) -> bool:
        repeated = _REPEATED.match(stripped)
        if repeated:
            # One line per thread collapsed by sysbench's logger: count what it stands for.
            self._header["repeated_lines"] = self._header.get("repeated_lines", 0) + int(
                repeated[1]
            )
            return True
        m = _LOG.match(stripped)
        if m is None:
            if is_option_error(stripped):  # printed to stderr without a prefix
                self._pending_error = (stripped, False)
                return True
            return False
        level, message = m[1], m[2].strip()
        if level == "WARNING":
            self._warnings.append(message)
        elif level in ("FATAL", "ALERT"):
            if message.startswith(_FORCED_SHUTDOWN):
                self._forced_shutdown = True  # --forced-shutdown: the report still follows
            else:
                self._pending_error = (message, self._workers_starting)
        return True

    # -- reports --

    def _start_report(self, checkpoint_s: float | None) -> Report:
        self._report = Report(checkpoint_s=checkpoint_s)
        self._reports.append(self._report)
        self._block = -1
        return self._report

    def _open_block(self, position: int) -> Report:
        report = self._report
        if report is None or position <= self._block:
            report = self._start_report(None)
        self._block = position
        return report

    def _report_line(self, text: str, stripped: str) -> bool:
        block = _BLOCKS.get(stripped)
        if block is not None:
            self._open_block(block[1])
            self._section = block[0]
            return True
        if self._standalone_figure(stripped):
            return True
        if self._report is None or self._section is None:
            return False
        if self._section == "histogram":
            return self._histogram_row(self._report, stripped)
        if not text[:1].isspace():
            return False
        kv = _KEY_VALUE.match(stripped)
        return kv is not None and self._report_figure(self._report, kv[1], kv[2].strip())

    def _standalone_figure(self, stripped: str) -> bool:
        m = _UNFINISHED.match(stripped)
        if m:
            self._open_block(2).unfinished_transactions = int(m[1])
            return True
        m = _TOTAL_OPERATIONS.match(stripped)
        if m:
            general = self._open_block(3).general
            general["total_operations"], general["operations_per_s"] = float(m[1]), float(m[2])
            return True
        m = _TRANSFERRED.match(stripped) or _LEGACY_TRANSFERRED.match(stripped)
        if m:
            general = self._open_block(4).general
            general["mib_transferred"], general["mib_per_s"] = float(m[1]), float(m[2])
            return True
        m = _LEGACY_OPERATIONS.match(stripped)
        if m:
            general = self._open_block(3).general
            general["total_operations"], general["operations_per_s"] = float(m[1]), float(m[2])
            return True
        return self._legacy_fileio_figure(stripped)

    def _legacy_fileio_figure(self, stripped: str) -> bool:
        m = _LEGACY_FILE_OPERATIONS.match(stripped)
        if m:
            general = self._open_block(3).general
            for i, key in enumerate(("file_reads", "file_writes", "file_other", "file_total"), 1):
                general[key] = float(m[i])
            return True
        m = _LEGACY_FILE_BYTES.match(stripped)
        if m:
            general = self._open_block(4).general
            for i, key in ((1, "read_mib"), (3, "written_mib"), (5, "transferred_mib")):
                general[key] = round(float(m[i]) * _MIB_PER_UNIT[m[i + 1]], 4)
            general["mib_per_s"] = float(m[7])
            return True
        m = _LEGACY_REQUESTS.match(stripped)
        if m:
            self._open_block(5).general["requests_per_s"] = float(m[1])
            return True
        return False

    def _histogram_row(self, report: Report, stripped: str) -> bool:
        m = _HISTOGRAM_ROW.match(stripped)
        if m:
            report.histogram.append((float(m[1]), int(m[2])))
            return True
        return bool(_HISTOGRAM_TITLE.match(stripped))

    def _report_figure(self, report: Report, key: str, value: str) -> bool:
        section = self._section
        if section == "sql":
            return key == "queries performed" or _sql_figure(report, key, value)
        if section == "latency":
            return self._latency_figure(report, key, value)
        if section == "fairness":
            return self._fairness_figure(report, key, value)
        if section == "general" and key in _LEGACY_LATENCY_TITLES and not value:
            self._section = "latency"  # 0.5 / 0.4 nest the latency under General
            return True
        return _general_figure(report, section, key, value)

    def _latency_figure(self, report: Report, key: str, value: str) -> bool:
        if key == "percentile stats":
            return True  # "disabled" with --percentile=0: no percentile to keep
        figure = _milliseconds(value)
        if figure is None:
            return False
        if key in _LATENCY_FIGURES:
            report.latency[_LATENCY_FIGURES[key]] = figure
            return True
        m = _PERCENTILE.match(key)
        if m is None:
            return False
        report.latency["percentile"] = float(m[1])
        report.latency["percentile_value"] = figure
        self._note_percentile(float(m[1]))
        return True

    def _fairness_figure(self, report: Report, key: str, value: str) -> bool:
        names = _FAIRNESS_FIGURES.get(key)
        m = _PAIR.match(value)
        if names is None or m is None:
            return False
        report.fairness[names[0]], report.fairness[names[1]] = float(m[1]), float(m[2])
        if key == "execution time (avg/stddev)":
            self._report = None  # the last line of every report
        return True

    # -- header --

    def _header_line(self, text: str, stripped: str) -> bool:
        if self._section == "memory_header" and text[:1].isspace():
            kv = _KEY_VALUE.match(stripped)
            if kv:
                self._memory_setting(kv[1], kv[2])
                return True
        for pattern, apply in self._header_rules:
            m = pattern.match(stripped)
            if m:
                apply(m)
                return True
        if stripped.startswith(_INFO_PREFIXES) or any(p.match(stripped) for p in _INFO_PATTERNS):
            return True
        return self._command_line(stripped)

    def _memory_setting(self, name: str, value: str) -> None:
        name = name.strip()
        key = _MEMORY_KEYS.get(name, name.replace(" ", "_"))
        self._header["memory_" + key] = value.strip()

    def _command_line(self, stripped: str) -> bool:
        m = _COMMAND.match(stripped)
        command = read_command(m["args"]) if m else None
        if command is None:
            return False
        self._header["command"] = command  # the last one wins: prepare often comes first
        return True

    def _build_header_rules(self) -> tuple[_HeaderRule, ...]:
        header = self._header

        def set_int(key: str) -> Callable[[re.Match[str]], None]:
            return lambda m: header.__setitem__(key, int(m[1]))

        def set_text(key: str) -> Callable[[re.Match[str]], None]:
            return lambda m: header.__setitem__(key, m[1])

        return (
            (_VERSION, self._version_line),
            (re.compile(r"^Number of threads:\s*(\d+)$"), set_int("threads")),
            (
                re.compile(r"^Report intermediate results every (\d+) second\(s\)$"),
                set_int("report_interval"),
            ),
            (re.compile(r"^Report checkpoint\(s\) at (.+) seconds$"), self._checkpoints_line),
            (
                re.compile(r"^Initializing random number generator from seed \((\d+)\)\.?$"),
                set_int("random_seed"),
            ),
            (re.compile(r"^Target transaction rate:\s*(\d+)/sec$"), set_int("rate")),
            (re.compile(r"^Forcing shutdown in (\d+) seconds$"), set_int("forced_shutdown_s")),
            (re.compile(r"^Prime numbers limit:\s*(\d+)$"), set_int("cpu_max_prime")),
            (
                re.compile(r"^Maximum prime number checked in CPU test:\s*(\d+)$"),
                set_int("cpu_max_prime"),
            ),
            (re.compile(r"^Initializing worker threads\.\.\.$"), self._workers_line),
            (re.compile(r"^Threads started!$"), self._started_line),
            (
                re.compile(r"^Running memory speed test with the following options:$"),
                self._memory_header_line,
            ),
            (re.compile(r"^(\d+) files, (\S+) each$"), set_int("file_num")),
            (re.compile(r"^(\S+) total file size$"), set_text("file_total_size")),
            (re.compile(r"^Block size (\S+)$"), set_text("file_block_size")),
            (re.compile(r"^Doing (.+?) (?:test|benchmark)\.?$"), self._doing_line),
            (_MEMORY_HEADER, lambda m: self._memory_setting(m[1], m[2])),
        )

    def _version_line(self, m: re.Match[str]) -> None:
        self._version = m[1]
        build = _BUILD.search(m[2] or "")
        if build:
            self._header["build"] = build[1]

    def _checkpoints_line(self, m: re.Match[str]) -> None:
        self._header["report_checkpoints"] = [float(t) for t in re.findall(_N, m[1])]

    def _workers_line(self, _m: re.Match[str]) -> None:
        self._workers_starting = True

    def _started_line(self, _m: re.Match[str]) -> None:
        self._header["threads_started"] = True

    def _memory_header_line(self, _m: re.Match[str]) -> None:
        self._section = "memory_header"

    def _doing_line(self, m: re.Match[str]) -> None:
        self._header.setdefault("doing", []).append(m[1])


def _sql_figure(report: Report, key: str, value: str) -> bool:
    names = _SQL_FIGURES.get(key)
    m = _COUNT_RATE.match(value)
    if names is None or m is None:
        return False
    count_key, rate_key = names
    report.sql[count_key] = float(m[1])
    if rate_key is not None and m[2] is not None:
        report.sql[rate_key] = float(m[2])
    return True


def _general_figure(report: Report, section: str | None, key: str, value: str) -> bool:
    if section == "general" and key in _GENERAL_SECONDS:
        seconds = _seconds(value)
        if seconds is None:
            return False
        report.general[_GENERAL_SECONDS[key]] = seconds
        return True
    name = _GENERAL_FIGURES.get((section or "", key))
    m = _COUNT_RATE.match(value)
    if name is None or m is None:
        return False
    report.general[name] = float(m[1])
    return True


def _derive_legacy_fileio(report: Report) -> None:
    """0.4 and 0.5 print fileio's operation counts over the run; 1.0 prints rates. Rates
    over the total time make the two comparable."""
    general = report.general
    total = general.get("total_time_s")
    if not total or "file_reads" not in general or "file_reads_per_s" in general:
        return
    for count, rate in (
        ("file_reads", "file_reads_per_s"),
        ("file_writes", "file_writes_per_s"),
        ("read_mib", "read_mib_per_s"),
        ("written_mib", "written_mib_per_s"),
    ):
        if count in general:
            general[rate] = round(general[count] / total, 2)


def _derive_legacy_queries(report: Report) -> None:
    """0.5 and 0.4 print "read/write requests" and "other operations" where 1.0 prints
    "queries"; their sum is the same figure, so every version answers sql["queries"]."""
    sql = report.sql
    if "queries" in sql or "read_write_requests" not in sql or "other_operations" not in sql:
        return
    sql["queries"] = sql["read_write_requests"] + sql["other_operations"]
    rates = sql.get("read_write_requests_per_s"), sql.get("other_operations_per_s")
    if rates[0] is not None and rates[1] is not None:
        sql["qps"] = rates[0] + rates[1]


def redact_secrets(line: str) -> str:
    """The line with the value of every --*password option masked."""
    return _SECRET.sub(lambda m: m[1] + "***", line)


def read_command(args: str) -> dict[str, Any] | None:
    """What a sysbench command line copied into a log says, or None if it is not one.

    Returns {"text", "test", "phase", "options"}: option names in their 1.0 spelling
    (--num-threads is threads, --oltp-tables-count is tables...), values as text,
    passwords masked. Both --name=value and --name value are read.
    """
    try:
        tokens = shlex.split(args)
    except ValueError:  # an unbalanced quote
        tokens = args.split()
    if not tokens or not (tokens[-1] in _PHASE_WORDS or any(t.startswith("--") for t in tokens)):
        return None
    options: dict[str, str] = {}
    positional: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("--") or len(token) == 2:
            positional.append(token)
            continue
        name, equals, value = token[2:].partition("=")
        key = name.replace("_", "-").lower()
        if not equals:
            following = tokens[i] if i < len(tokens) else None
            takes = following is not None and not following.startswith("--")
            if takes and (key == "test" or not _is_positional(str(following))):
                value, i = str(following), i + 1
            else:
                value = "on"  # a flag such as --histogram
        options[_OPTION_ALIASES.get(key, key)] = "***" if "password" in key else value
    phase = positional[-1] if positional and positional[-1] in _PHASE_WORDS else None
    script = options.pop("test", None) or next(
        (p for p in positional if p not in _PHASE_WORDS), None
    )
    return {
        "text": redact_secrets("sysbench " + args),
        "test": _test_name(script) if script else None,
        "phase": phase,
        "options": options,
    }


def _is_positional(token: str) -> bool:
    name = _test_name(token)
    return (
        token in _PHASE_WORDS
        or token.endswith(".lua")
        or name in ALL_TESTS
        or name in _LEGACY_TESTS
    )


def _test_name(script: str) -> str:
    """`oltp_read_write`, `/usr/share/sysbench/oltp_insert.lua`, `tests/db/oltp.lua` ->
    the test's name (`oltp` for the legacy scripts)."""
    base = script.rstrip("/").rsplit("/", 1)[-1]
    return base[: -len(".lua")] if base.endswith(".lua") else base


def parse_text(text: str, exit_code: int | None = None) -> ParseResult:
    parser = OutputParser()
    for line in text.splitlines():
        parser.feed(line)
    return parser.finish(exit_code)
