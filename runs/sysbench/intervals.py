"""How sysbench's interval lines read, in 1.0 (SQL tests, cpu/threads/mutex, fileio,
memory, the `--rate` queue line; the SQL line as the C report and as Lua's
`sysbench.report_default` print it) and 0.5. Pure."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from runs.sysbench.output import IntervalSample

NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


class NotFinite(ValueError):
    """A figure too large for a float (`1e999`): not a figure sysbench prints."""


def number(text: str) -> float:
    """A figure of a line. One that overflows to infinity is refused, so the line it is
    on counts as unrecognised (and stays in the raw log) instead of storing infinity,
    which JSON cannot carry."""
    return finite(float(text))


def finite(value: float) -> float:
    if not math.isfinite(value):
        raise NotFinite(str(value))
    return value


def whole_line(pattern: str) -> re.Pattern[str]:
    """A whole-line pattern in which each space stands for any run of whitespace.

    Whole-line, so that a line cut short (a killed process, a full pipe) is not read
    as a sample carrying half a number; loose spacing, because column widths changed
    between releases.
    """
    return re.compile("^" + pattern.replace(" ", r"\s+") + "$")


# Matched against a stripped line: a lazy `(.*?)\s*$` would retry at every character.
INTERVAL = re.compile(rf"^\[\s*({NUMBER})s\s*\]\s*(.*)$")
CHECKPOINT = "Checkpoint report:"
QUEUE = whole_line(r"queue length: (\d+), concurrency: (\d+)")
_LATENCY_LABEL = rf"\(ms,\s*(?P<pct>{NUMBER})%\): (?P<lat>{NUMBER})"
# The C report (`err/s: 0.00`) and the Lua one, sysbench.report_default and the scripts
# that print their own (sysbench-tpcc): `err/s 0.00`, no colon, spacing of their own. So
# each label's colon is optional, and fields part at any run of blanks (or a comma).
_FIELD = r",?\s+"
_SQL_10 = re.compile(
    "^"
    + _FIELD.join(
        (
            r"thds:?\s*(?P<threads>\d+)",
            rf"tps:?\s*(?P<tps>{NUMBER})",
            rf"qps:?\s*(?P<qps>{NUMBER})",
            rf"\(r/w/o:?\s*(?P<reads>{NUMBER})\s*/\s*(?P<writes>{NUMBER})\s*/\s*"
            rf"(?P<other>{NUMBER})\s*\)",
            rf"lat\s*\(ms,\s*(?P<pct>{NUMBER})\s*%\s*\):?\s*(?P<lat>{NUMBER})",
            rf"err/s:?\s*(?P<err>{NUMBER})",
            rf"reconn/s:?\s*(?P<reconn>{NUMBER})",
        )
    )
    # sysbench-tpcc's tpcc_counters.lua goes on with each transaction's rate, its mix:
    # `no: 4.00 pt: 3.00 os: 1.00 dl: 0.00 sl: 1.00` (NewOrder, Payment, OrderStatus,
    # Delivery, StockLevel per second).
    + "".join(
        rf"(?:{_FIELD}{name}:?\s*(?P<{name}>{NUMBER}))?" for name in ("no", "pt", "os", "dl", "sl")
    )
    + "$"
)
_EPS_10 = whole_line(rf"thds: (?P<threads>\d+) eps: (?P<eps>{NUMBER}) lat\s*{_LATENCY_LABEL}")
_FILEIO_10 = whole_line(
    rf"reads: (?P<read>{NUMBER}) MiB/s writes: (?P<written>{NUMBER}) MiB/s "
    rf"fsyncs: (?P<fsyncs>{NUMBER})/s latency\s*{_LATENCY_LABEL}"
)
_MEMORY_10 = whole_line(rf"(?P<mib>{NUMBER}) MiB/sec")
# 0.5; its early builds said reads/s, writes/s and printed no errors/reconnects.
_LEGACY_05 = re.compile(
    r"^threads:\s*(?P<threads>\d+),\s*"
    rf"tps:\s*(?P<tps>{NUMBER}),\s*"
    rf"reads(?:/s)?:\s*(?P<reads>{NUMBER}),\s*"
    rf"writes(?:/s)?:\s*(?P<writes>{NUMBER}),?\s*"
    rf"response time:\s*(?P<lat>{NUMBER})ms\s*\((?P<pct>{NUMBER})%\)"
    rf"(?:,\s*errors:\s*(?P<err>{NUMBER}),\s*reconnects:\s*(?P<reconn>{NUMBER}))?$"
)
# fileio and memory print throughput, not operations per second: it goes to `extra`.
_EXTRA_GROUPS = {
    "read": "read_mib_per_s",
    "written": "written_mib_per_s",
    "fsyncs": "fsyncs_per_s",
    "mib": "mib_per_s",
    # A TPC-C script's transaction mix (runs/analysis/tpcc.py), when it prints one.
    "no": "new_order_per_s",
    "pt": "payment_per_s",
    "os": "order_status_per_s",
    "dl": "delivery_per_s",
    "sl": "stock_level_per_s",
}
# Each format with the `extra` figures it prints, looked up once, not per line.
_SAMPLE_FORMATS = tuple(
    (pattern, tuple((g, key) for g, key in _EXTRA_GROUPS.items() if g in pattern.groupindex))
    for pattern in (_SQL_10, _EPS_10, _FILEIO_10, _MEMORY_10, _LEGACY_05)
)


def interval_sample(time_s: float, rest: str, threads: int) -> IntervalSample | None:
    """`threads` stands in for lines that print no thread count (fileio, memory). None
    for a line of no known format, or with a figure that is not finite."""
    for pattern, extras in _SAMPLE_FORMATS:
        m = pattern.match(rest)
        if m:
            return sample_of(time_s, m.groupdict(), threads, extras)
    return None


def sample_of(
    time_s: float,
    g: Mapping[str, str | None],
    threads: int,
    extras: tuple[tuple[str, str], ...] = (),
) -> IntervalSample | None:
    """The sample of a line's figures by group name (report_hooks.py's too). None when a
    figure is not finite."""
    # The hot path of a log import and of the worker: one pass over the figures.
    figures = {name: float(text) for name, text in g.items() if text is not None}
    if not math.isfinite(sum(figures.values())):
        return None  # a figure overflowed: see number()
    get = figures.get
    return IntervalSample(
        time_s=time_s,
        threads=int(figures.get("threads", 0)) if "threads" in g else threads,
        tps=get("tps"),
        qps=get("qps"),
        reads=get("reads"),
        writes=get("writes"),
        other=get("other"),
        latency_pct=get("pct"),
        latency_ms=get("lat"),
        errors_per_s=get("err"),
        reconnects_per_s=get("reconn"),
        eps=get("eps"),
        # Only what the line printed: an optional field left out is not a zero.
        extra={key: figures[group] for group, key in extras if group in figures},
    )
