"""Streaming parser for sysbench's text output.

Reads sysbench 1.0 (SQL tests, cpu, fileio, memory, threads, mutex) and the older
0.5 and 0.4 logs. The worker feeds it line by line while sysbench runs: an interval
line comes back as an event from the very feed() call that received it. Pure: no
Django, no I/O, and it never raises on what sysbench (or a broken pipe) prints;
lines it cannot place are only counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from runs.sysbench.commandline import COMMAND_LINE, read_command, redact_secrets
from runs.sysbench.errors import SysbenchError, classify, is_option_error
from runs.sysbench.intervals import (
    CHECKPOINT,
    INTERVAL,
    NUMBER,
    QUEUE,
    finite,
    interval_sample,
    number,
)
from runs.sysbench.lua_reports import report_of_line
from runs.sysbench.output import Event, IntervalSample, ParseResult, QueueSample, Report
from runs.sysbench.report_hooks import DEFAULT_PERCENTILE, JSON_BRACKETS, JsonObject, csv_sample

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
_TOTAL_OPERATIONS = re.compile(rf"^Total operations:\s*({NUMBER})\s*\(\s*({NUMBER}) per second\)$")
_TRANSFERRED = re.compile(rf"^({NUMBER}) MiB transferred\s*\(\s*({NUMBER}) MiB/sec\)$")
# 0.4 and 0.5: memory prints MB (binary megabytes, as 1.0's MiB), fileio prints its counts.
_LEGACY_OPERATIONS = re.compile(
    rf"^Operations performed:\s*({NUMBER})\s*\(\s*({NUMBER}) ops/sec\)$"
)
_LEGACY_TRANSFERRED = re.compile(rf"^({NUMBER}) MB transferred\s*\(\s*({NUMBER}) MB/sec\)$")
_LEGACY_FILE_OPERATIONS = re.compile(
    rf"^Operations performed:\s*({NUMBER}) reads?, ({NUMBER}) writes?, "
    rf"({NUMBER}) other = ({NUMBER}) total$",
    re.IGNORECASE,
)
_SIZE = rf"({NUMBER})([KMGT]?b)"
_LEGACY_FILE_BYTES = re.compile(
    rf"^Read {_SIZE}\s+Written {_SIZE}\s+Total transferred {_SIZE}\s+\(({NUMBER})Mb/sec\)$"
)
_LEGACY_REQUESTS = re.compile(rf"^({NUMBER}) Requests/sec executed$")
_MIB_PER_UNIT = {"b": 1 / 1024**2, "Kb": 1 / 1024, "Mb": 1.0, "Gb": 1024.0, "Tb": 1024.0**2}

_KEY_VALUE = re.compile(r"^([^:]+?):\s*(.*)$")
_COUNT_RATE = re.compile(rf"^({NUMBER})(?:\s+\(\s*({NUMBER}) per sec(?:\.|ond)\))?$")
_DURATION = re.compile(rf"^({NUMBER})\s*(ms|us|s)?$")
_PAIR = re.compile(rf"^({NUMBER})/({NUMBER})$")
_PERCENTILE = re.compile(rf"^(?:approx\.\s+)?({NUMBER})(?:st|nd|rd|th)?\s+percentile$")
_HISTOGRAM_ROW = re.compile(rf"^({NUMBER})\s+\|[*\s]*?(\d+)$")
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
    return finite(number(m[1]) * scale)


def _seconds(value: str) -> float | None:
    m = _DURATION.match(value)
    if m is None:
        return None
    scale = {"ms": 0.001, "us": 0.000001}.get(m[2] or "s", 1.0)
    return finite(number(m[1]) * scale)


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

    def __init__(self, *, keep_samples: bool = True, percentile: float | None = None) -> None:
        # A log import stores the samples as they come back from feed(): kept here too,
        # a million of them would fill the memory.
        self._keep_samples = keep_samples
        # The run's --percentile, when the caller knows it: a report hook's line says none.
        self._percentile = percentile
        self._json: JsonObject | None = None  # a report_json object, until it closes
        # A `thds: 0` line: the last interval, or a Lua hook's final report (lua_reports.py),
        # as what follows it tells; released as a sample by a next sample or report block.
        self._held: IntervalSample | None = None
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
        self.settle(exit_code)
        if self._json is not None:  # an object cut short
            self._unrecognised += len(self._json.lines)
            self._json = None
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
        if self._held is not None and stripped in _BLOCKS:
            self._release_held(events)  # sysbench's own report follows: it was an interval
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
        if self._json is not None or stripped.startswith("{"):
            return self._json_line(stripped, events)
        m = INTERVAL.match(stripped)
        if m is None:
            return self._csv_line(stripped, events) or stripped in JSON_BRACKETS
        time_s, rest = number(m[1]), m[2]
        if rest == CHECKPOINT:
            self._release_held(events)
            self._start_report(time_s)
            return True
        queue = QUEUE.match(rest)
        if queue:
            queue_sample = QueueSample(time_s, int(queue[1]), int(queue[2]))
            if self._keep_samples:
                self._queue.append(queue_sample)
            events.append(queue_sample)
            return True
        sample = interval_sample(time_s, rest, int(self._header.get("threads", 0)))
        if sample is None:
            return False
        self._note_percentile(sample.latency_pct)
        self._sample_line(sample, events)
        return True

    def _sample_line(self, sample: IntervalSample, events: list[Event]) -> None:
        """An interval-shaped line (text, CSV or JSON): a sample, or the report a script's
        Lua hook prints where sysbench would print its own."""
        if self._held is not None:
            if self._open_empty_report():  # the held line was the report, this one follows
                self._fill_lua_report(self._report, self._held)  # type: ignore[arg-type]
                self._held = None
            else:
                self._release_held(events)
        # Right after `Checkpoint report:` or a histogram comes a Lua hook's report or, as
        # sysbench's reporting thread may print between them, an interval line: held until
        # the next line tells (sysbench's own report opens a block). `thds: 0` ends a run.
        if self._open_empty_report() or (
            sample.threads == 0 and self._header.get("threads_started")
        ):
            self._held = sample
            return
        self._keep(sample, events)

    def _open_empty_report(self) -> bool:
        return self._report is not None and self._report.empty

    def _fill_lua_report(self, report: Report, sample: IntervalSample) -> None:
        since = max((r.checkpoint_s or 0.0 for r in self._reports if r is not report), default=0)
        lua = report_of_line(sample, checkpoint_s=report.checkpoint_s, since_s=since)
        report.sql, report.general, report.latency = lua.sql, lua.general, lua.latency
        report.printed_by = lua.printed_by
        self._report = None

    def _release_held(self, events: list[Event]) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self._keep(held, events)

    def settle(self, exit_code: int | None) -> list[Event]:
        """Once the output has ended: a `thds: 0` line nothing followed is the final report
        of a script's Lua hook when sysbench printed none of its own and ended well; else
        the last interval, which comes back as a sample (the worker stores it as the others)."""
        held, self._held = self._held, None
        events: list[Event] = []
        if held is None:
            return events
        if self._report is not None and self._report.empty:
            self._fill_lua_report(self._report, held)
        elif self.final_report_missing and exit_code in (None, 0) and not self._errors:
            self._fill_lua_report(self._start_report(None), held)
        else:
            self._keep(held, events)
        return events

    @property
    def final_report_missing(self) -> bool:
        return not any(r.checkpoint_s is None and r.complete for r in self._reports)

    def _keep(self, sample: IntervalSample, events: list[Event]) -> None:
        if self._keep_samples:
            self._samples.append(sample)
        events.append(sample)

    def _csv_line(self, stripped: str, events: list[Event]) -> bool:
        # A script's report hook printing sysbench.report_csv lines (report_hooks.py).
        sample = csv_sample(stripped, self._hook_percentile())
        if sample is None:
            return False
        self._sample_line(sample, events)
        return True

    def _json_line(self, stripped: str, events: list[Event]) -> bool:
        # One line of a sysbench.report_json object: the sample comes with its last line.
        gathering = self._json or JsonObject()
        if not gathering.add(stripped):
            self._json = gathering
            return True
        self._json = None
        sample = gathering.sample(self._hook_percentile())
        if sample is None:
            self._unrecognised += len(gathering.lines) - 1  # the last one: by the caller
            return False
        self._sample_line(sample, events)
        return True

    def _hook_percentile(self) -> float:
        """What a report hook's latency is at: the run's --percentile as the caller, the
        log's interval lines or its command line say it, else sysbench's default."""
        if self._percentile is not None:
            return self._percentile
        if "percentile" in self._header:
            return float(self._header["percentile"])
        given = (self._header.get("command") or {}).get("options", {}).get("percentile")
        try:
            return float(given) if given is not None else DEFAULT_PERCENTILE
        except ValueError:
            return DEFAULT_PERCENTILE

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
            general["total_operations"], general["operations_per_s"] = number(m[1]), number(m[2])
            return True
        m = _TRANSFERRED.match(stripped) or _LEGACY_TRANSFERRED.match(stripped)
        if m:
            general = self._open_block(4).general
            general["mib_transferred"], general["mib_per_s"] = number(m[1]), number(m[2])
            return True
        m = _LEGACY_OPERATIONS.match(stripped)
        if m:
            general = self._open_block(3).general
            general["total_operations"], general["operations_per_s"] = number(m[1]), number(m[2])
            return True
        return self._legacy_fileio_figure(stripped)

    def _legacy_fileio_figure(self, stripped: str) -> bool:
        m = _LEGACY_FILE_OPERATIONS.match(stripped)
        if m:
            general = self._open_block(3).general
            for i, key in enumerate(("file_reads", "file_writes", "file_other", "file_total"), 1):
                general[key] = number(m[i])
            return True
        m = _LEGACY_FILE_BYTES.match(stripped)
        if m:
            general = self._open_block(4).general
            for i, key in ((1, "read_mib"), (3, "written_mib"), (5, "transferred_mib")):
                general[key] = round(finite(number(m[i]) * _MIB_PER_UNIT[m[i + 1]]), 4)
            general["mib_per_s"] = number(m[7])
            return True
        m = _LEGACY_REQUESTS.match(stripped)
        if m:
            self._open_block(5).general["requests_per_s"] = number(m[1])
            return True
        return False

    def _histogram_row(self, report: Report, stripped: str) -> bool:
        m = _HISTOGRAM_ROW.match(stripped)
        if m:
            report.histogram.append((number(m[1]), int(m[2])))
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
        report.latency["percentile"] = number(m[1])
        report.latency["percentile_value"] = figure
        self._note_percentile(number(m[1]))
        return True

    def _fairness_figure(self, report: Report, key: str, value: str) -> bool:
        names = _FAIRNESS_FIGURES.get(key)
        m = _PAIR.match(value)
        if names is None or m is None:
            return False
        report.fairness[names[0]], report.fairness[names[1]] = number(m[1]), number(m[2])
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
        m = COMMAND_LINE.match(stripped)
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
        self._header["report_checkpoints"] = [number(t) for t in re.findall(NUMBER, m[1])]

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
    count, rate = number(m[1]), None if m[2] is None else number(m[2])  # both, or neither
    report.sql[count_key] = count
    if rate_key is not None and rate is not None:
        report.sql[rate_key] = rate
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
    report.general[name] = number(m[1])
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


def parse_text(text: str, exit_code: int | None = None) -> ParseResult:
    parser = OutputParser()
    for line in text.splitlines():
        parser.feed(line)
    return parser.finish(exit_code)
