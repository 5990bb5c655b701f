"""The interval reports a script's own hook prints (`sysbench.hooks.report_intermediate`)
in sysbench 1.0's machine-readable forms: `sysbench.report_csv`, one interval a line, and
`sysbench.report_json`, one object over several lines inside one array. The text form
(`sysbench.report_default`) is an interval line: intervals.py. Pure.

Neither form says its latency's percentile: it is sysbench's `--percentile` (95 unless
given), which the caller passes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from runs.sysbench.intervals import NUMBER, sample_of
from runs.sysbench.output import IntervalSample

# sysbench's own default --percentile: what a hook's latency is at when nothing says.
DEFAULT_PERCENTILE = 95.0

# time,threads,tps,qps,reads,writes,other,latency,errors,reconnects. Whole-line and ten
# fields exactly, so that no other line is taken for one.
CSV_REPORT = re.compile(
    rf"^(?P<time>\d+),(?P<threads>\d+),(?P<tps>{NUMBER}),(?P<qps>{NUMBER}),"
    rf"(?P<reads>{NUMBER}),(?P<writes>{NUMBER}),(?P<other>{NUMBER}),(?P<lat>{NUMBER}),"
    rf"(?P<err>{NUMBER}),(?P<reconn>{NUMBER})$"
)
# report_json opens its array with `[` and closes it with `]`, each alone on a line.
JSON_BRACKETS = frozenset({"[", "]"})
# An object of report_json is 15 lines; one that runs on past this is not one.
_JSON_MAX_LINES = 40
_JSON_FIGURES = {
    "tps": "tps",
    "latency": "lat",
    "errors": "err",
    "reconnects": "reconn",
}
_JSON_QPS = {"total": "qps", "reads": "reads", "writes": "writes", "other": "other"}


def csv_sample(line: str, percentile: float) -> IntervalSample | None:
    """The sample of a report_csv line; None for any other line."""
    m = CSV_REPORT.match(line)
    if m is None:
        return None
    g = {k: v for k, v in m.groupdict().items() if k != "time"}
    g["pct"] = str(percentile)
    return sample_of(float(m["time"]), g, 0)


class JsonObject:
    """The lines of one report_json object, gathered until its braces close."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._depth = 0

    def add(self, stripped: str) -> bool:
        """Take a line; True once the object is closed (or has run on too long)."""
        self.lines.append(stripped)
        self._depth += stripped.count("{") - stripped.count("}")
        return self._depth <= 0 or len(self.lines) >= _JSON_MAX_LINES

    def sample(self, percentile: float) -> IntervalSample | None:
        """The interval the object reports; None for an object of another shape."""
        try:
            data = json.loads("".join(self.lines).rstrip(","))  # `},` before the next one
        except ValueError:
            return None
        return json_sample(data, percentile) if isinstance(data, Mapping) else None


def json_sample(data: Mapping[str, Any], percentile: float) -> IntervalSample | None:
    qps = data.get("qps")
    figures = [(key, data.get(name)) for name, key in _JSON_FIGURES.items()]
    if isinstance(qps, Mapping):
        figures += [(key, qps.get(name)) for name, key in _JSON_QPS.items()]
    figures += [("threads", data.get("threads")), ("time", data.get("time"))]
    if len(figures) != 10 or not all(_is_figure(value) for _, value in figures):
        return None
    g = {key: str(value) for key, value in figures if key != "time"}
    g["pct"] = str(percentile)
    return sample_of(float(data["time"]), g, 0)


def _is_figure(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
