"""The plan editor's side of a plan: its matrix as form fields, and back.

A form posts flat fields: `threads=1,2,4`, `opt_time=60`, checkboxes `set__sync_binlog=0`
and `set__sync_binlog=1`, rows of other settings (`setting_name_0`, `setting_values_0`)
of option axes (`axis_name_0`, `axis_values_0`) and of the servers axis's configs
(`config_label_0`, `config_text_0`). This module turns them into the plan's JSON fields,
and a plan into the values the editor shows. It also estimates how
long a batch would take. Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from runs.analysis.auto import rate as rate_search
from runs.analysis.auto import threads as threads_search
from runs.analysis.auto.settings import Auto
from runs.errors import InvalidInput
from runs.sysbench.matrix import Cell, prepare_points, restart_points
from runs.sysbench.options import OPTIONS, Kind, OptionSpec
from runs.sysbench.script_options import unquoted

THREAD_PRESETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
EXTRA_ROWS = 3  # empty rows of other settings and option axes the editor offers

# The settings most experiments are about, as checkboxes; others go in rows.
SETTING_CHECKBOXES: dict[str, dict[str, tuple[str, ...]]] = {
    "mysql": {"innodb_flush_log_at_trx_commit": ("0", "1", "2"), "sync_binlog": ("0", "1")},
    "postgresql": {
        "synchronous_commit": ("on", "off", "local", "remote_write"),
        "full_page_writes": ("on", "off"),
    },
}
# The options shown at first; the others sit under "more options".
COMMON_OPTIONS = (
    "time",
    "report-interval",
    "percentile",
    "rate",
    "events",
    "tables",
    "table-size",
    "file-test-mode",
    "file-total-size",
    "memory-block-size",
    "memory-total-size",
    "cpu-max-prime",
)
# Added to each run's sysbench time: applying and verifying the settings, starting
# sysbench, its report; a prepare writes about this many rows a second.
RUN_OVERHEAD_S = 3.0
PREPARE_ROWS_PER_S = 50_000.0
PREPARE_OVERHEAD_S = 5.0


class FormData(Protocol):
    """A QueryDict, or a dict of lists in tests."""

    def get(self, key: str, default: Any = ...) -> Any: ...

    def getlist(self, key: str) -> list[Any]: ...

    def __iter__(self) -> Any: ...


@dataclass
class Matrix:
    """The plan fields the editor's dynamic inputs make."""

    threads: list[int] = field(default_factory=list)
    options: dict[str, object] = field(default_factory=dict)
    server_settings: dict[str, list[str]] = field(default_factory=dict)
    option_axes: dict[str, list[object]] = field(default_factory=dict)
    configs: list[dict[str, str]] = field(default_factory=list)  # Plan.servers["configs"]


def split_list(text: str) -> list[str]:
    """`1, 2,4` or `1 2 4` → ["1", "2", "4"]."""
    return [part for part in text.replace(",", " ").split() if part]


def parse_threads(text: str) -> list[int]:
    values = []
    for part in split_list(text):
        if not part.isdigit():
            raise InvalidInput("threads", f"{part!r} is not a whole number of threads")
        values.append(int(part))
    if not values:
        raise InvalidInput("threads", "give at least one thread count, e.g. 1,2,4")
    return values


def matrix_from_form(data: FormData) -> Matrix:
    """The matrix fields of a posted editor; raises InvalidInput naming the field."""
    matrix = Matrix(threads=parse_threads(str(data.get("threads", "") or "")))
    for name, spec in OPTIONS.items():
        if name == "threads":
            continue
        raw = str(data.get(f"opt_{name}", "") or "").strip()
        if raw:
            matrix.options[name] = _option_value(spec, raw)
    for name in _checkbox_names():
        values = [str(v) for v in data.getlist(f"set__{name}") if str(v).strip()]
        if values:
            matrix.server_settings[name] = values
    for i in range(_row_count(data, "setting_name_")):
        name = str(data.get(f"setting_name_{i}", "") or "").strip()
        values = split_list(str(data.get(f"setting_values_{i}", "") or ""))
        if name and not values:
            raise InvalidInput(name, "give the values to try, e.g. 100,200")
        if name:
            if name in matrix.server_settings:
                raise InvalidInput(name, "is given twice")
            matrix.server_settings[name] = values
    for i in range(_row_count(data, "axis_name_")):
        name = str(data.get(f"axis_name_{i}", "") or "").strip()
        values = split_list(str(data.get(f"axis_values_{i}", "") or ""))
        if name and not values:
            raise InvalidInput(name, "give the values of the axis, e.g. 1,4")
        if name:
            if name in matrix.option_axes:
                raise InvalidInput(name, "is an axis twice")
            if name in matrix.options:
                raise InvalidInput(name, "is both a fixed option and an axis")
            matrix.option_axes[name] = [_option_value(OPTIONS.get(name), v) for v in values]
    matrix.configs = configs_from_form(data)
    return matrix


def configs_from_form(data: FormData) -> list[dict[str, str]]:
    """The servers axis's configs, one row each: a label and the snippet's lines. A
    browser sends a textarea's lines ending in CRLF: stored as the API's `\n`."""
    configs = []
    for i in range(_row_count(data, "config_label_")):
        label = str(data.get(f"config_label_{i}", "") or "").strip()
        text = str(data.get(f"config_text_{i}", "") or "").replace("\r\n", "\n")
        if not label and text.strip():
            raise InvalidInput("servers.configs", f"config {i + 1}: give it a label, e.g. b1e1")
        if label:
            configs.append({"label": label, "text": text})
    return configs


def parse_script_options(text: str) -> dict[str, object]:
    """A custom script's own options as the editor takes them, one `name=value` a line
    (checked against what the script declares when the plan is saved). The value is all
    after the first `=`, spaces and `=` inside it kept, as `--name="a value"` would pass
    it: `mysql_table_options="COLLATE latin1_bin"`."""
    values: dict[str, object] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, raw = line.partition("=")
        name, raw = name.strip().lstrip("-"), raw.strip()
        if not sep or not name:
            raise InvalidInput("script_options", f"line {number}: write name=value, e.g. scale=10")
        if name in values:
            raise InvalidInput("script_options", f"line {number}: {name} is given twice")
        values[name] = int(raw) if raw.lstrip("-").isdigit() else unquoted(raw)
    return values


def script_options_text(values: Mapping[str, object]) -> str:
    """The inverse of parse_script_options."""
    return "\n".join(f"{name}={_shown(value)}" for name, value in values.items())


def _option_value(spec: OptionSpec | None, raw: str) -> object:
    # Whole numbers as numbers, so that the stored plan reads {"time": 60}; everything
    # else as text, which the whitelist checks and canonicalises.
    if spec is not None and spec.kind == Kind.INT and raw.lstrip("-").isdigit():
        return int(raw)
    return raw


def _checkbox_names() -> list[str]:
    return [name for boxes in SETTING_CHECKBOXES.values() for name in boxes]


def _row_count(data: FormData, prefix: str) -> int:
    suffixes = [str(k)[len(prefix) :] for k in data if str(k).startswith(prefix)]
    indexes = [int(s) for s in suffixes if s.isdigit() and int(s) < 100]
    return max(indexes) + 1 if indexes else 0


def form_values(
    *,
    threads: Sequence[object],
    options: Mapping[str, object],
    server_settings: Mapping[str, Sequence[object]],
    option_axes: Mapping[str, Sequence[object]],
    configs: Sequence[Mapping[str, object]] = (),
) -> dict[str, Any]:
    """What the editor shows for a plan: the inverse of matrix_from_form."""
    checkbox_names = set(_checkbox_names())
    checked = {n: [str(v) for v in vs] for n, vs in server_settings.items() if n in checkbox_names}
    other_settings = [
        (n, ",".join(str(v) for v in vs))
        for n, vs in server_settings.items()
        if n not in checkbox_names
    ]
    axes = [(n, ",".join(_shown(v) for v in vs)) for n, vs in option_axes.items()]
    return {
        "threads": ",".join(str(t) for t in threads),
        "options": {n: _shown(v) for n, v in options.items()},
        "checked": checked,
        "boxes": checkbox_boxes(checked),
        "setting_rows": _padded(other_settings),
        "axis_rows": _padded(axes),
        "config_rows": _config_rows(
            [(str(c.get("label", "")), str(c.get("text", ""))) for c in configs]
        ),
    }


def form_values_from_post(data: FormData) -> dict[str, Any]:
    """What the editor shows again after a refused post: the user's own text."""
    checkbox_names = _checkbox_names()
    checked = {name: [str(v) for v in data.getlist(f"set__{name}")] for name in checkbox_names}
    return {
        "threads": str(data.get("threads", "") or ""),
        "options": {
            name: str(data.get(f"opt_{name}", "") or "")
            for name in OPTIONS
            if data.get(f"opt_{name}", "")
        },
        "checked": checked,
        "boxes": checkbox_boxes(checked),
        "setting_rows": _padded(
            [
                (str(data.get(f"setting_name_{i}", "")), str(data.get(f"setting_values_{i}", "")))
                for i in range(_row_count(data, "setting_name_"))
                if data.get(f"setting_name_{i}", "")
            ]
        ),
        "axis_rows": _padded(
            [
                (str(data.get(f"axis_name_{i}", "")), str(data.get(f"axis_values_{i}", "")))
                for i in range(_row_count(data, "axis_name_"))
                if data.get(f"axis_name_{i}", "")
            ]
        ),
        "config_rows": _config_rows(
            [
                (str(data.get(f"config_label_{i}", "")), str(data.get(f"config_text_{i}", "")))
                for i in range(_row_count(data, "config_label_"))
                if data.get(f"config_label_{i}", "") or data.get(f"config_text_{i}", "")
            ]
        ),
    }


def checkbox_boxes(checked: Mapping[str, Sequence[str]]) -> dict[str, dict[str, list[str]]]:
    """The checkboxes of each engine's settings in the order a browser posts them back: the
    plan's values first, in the plan's order (its first value is the baseline), then the
    others. So a plan re-opened and saved unchanged keeps `1,0`, and a value outside the
    usual choices is shown, not dropped."""
    boxes: dict[str, dict[str, list[str]]] = {}
    for engine, settings in SETTING_CHECKBOXES.items():
        boxes[engine] = {}
        for name, choices in settings.items():
            mine = list(dict.fromkeys(str(v) for v in checked.get(name, ())))
            boxes[engine][name] = mine + [c for c in choices if c not in mine]
    return boxes


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _padded(rows: list[tuple[str, str]]) -> list[tuple[int, str, str]]:
    rows = rows + [("", "")] * max(EXTRA_ROWS - len(rows), 1)
    return [(i, name, values) for i, (name, values) in enumerate(rows)]


def _config_rows(rows: list[tuple[str, str]]) -> list[tuple[int, str, str]]:
    # One empty row to start from; the editor adds more ("Add a config").
    return [(i, label, text) for i, (label, text) in enumerate(rows or [("", "")])]


# --- estimate --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    cells: int
    runs: int
    sysbench_s: float | None  # None when a run is bounded by events, not time
    total_s: float | None
    prepares: int = 0  # data sets prepared: one per shared data set, one per rebuild
    prepare_s: float = 0.0
    restarts: int = 0  # server restarts, the put-back at the end included
    restart_s: float = 0.0  # their time, with the warm-ups after them
    restart_each_s: float = 0.0  # one restart's measured seconds
    restart_source: str = ""  # where that figure comes from
    restarts_exact: bool = True  # False: the order of a seed drawn at launch may differ
    warmups: int = 0  # the warm-ups after the restarts (none after the put-back)
    warm_s: int = 0  # each one's seconds
    # with auto modes: the runs they may add at most, and the time then
    most_runs: int = 0
    most_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        most_runs = max(self.most_runs, self.runs)
        most_s = self.most_s if most_runs > self.runs else self.total_s
        return {
            "cells": self.cells,
            "runs": self.runs,
            "prepares": self.prepares,
            "prepare_s": self.prepare_s,
            "prepare_text": duration_text(self.prepare_s),
            "sysbench_s": self.sysbench_s,
            "total_s": self.total_s,
            "total_text": duration_text(self.total_s),
            "restarts": self.restarts,
            "restart_s": self.restart_s,
            "restart_text": duration_text(self.restart_s) if self.restarts else "",
            "restart_each_s": self.restart_each_s,
            "restart_source": self.restart_source,
            "restarts_exact": self.restarts_exact,
            "warmups": self.warmups,
            "warm_s": self.warm_s,
            "most_runs": most_runs,
            "most_s": most_s,
            "most_text": duration_text(most_s),
        }


def estimate(
    cells: Sequence[Cell],
    dataset_policy: str,
    auto: Auto | None = None,
    restarts: Mapping[str, Any] | None = None,
    servers: Mapping[str, Any] | None = None,
) -> Estimate:
    """How long a batch of these cells would take: sysbench's time, plus a little per
    run, plus the prepares of the data sets (about PREPARE_ROWS_PER_S rows a second),
    plus the server restarts (`restarts`: their number and seconds, counted over the
    matrix's restart points with a measured restart time of the engine, and the warm-ups
    after them that `servers`, the plan's, asks for); with auto
    modes, also the most they may take as they add runs (an auto batch estimated at 17 s
    took 160 s when only its first runs were counted)."""
    durations = [_duration(cell.options) for cell in cells]
    sysbench_s = None if None in durations else float(sum(d for d in durations if d))
    policy = "fresh" if dataset_policy == "fresh" else "shared"
    prepares = [] if dataset_policy == "existing" else prepare_points(cells, policy)
    by_position = {cell.position: cell for cell in cells}
    prepare_s = sum(_prepare_s(by_position[p].options) for p in prepares)
    total_s = None
    if sysbench_s is not None:
        total_s = sysbench_s + RUN_OVERHEAD_S * len(cells) + prepare_s
    restart_s = float((restarts or {}).get("seconds") or 0)
    if total_s is not None:
        total_s += restart_s
    cold = (servers or {}).get("after_restart") == "cold"
    warmups = len(restart_points(cells)) if (restarts or {}).get("restarts") and not cold else 0
    added = _auto_added(cells, auto) if auto is not None and auto.any else []
    added_s = [None if d is None else d + RUN_OVERHEAD_S for d in added]
    most_s = None
    if total_s is not None and None not in added_s:
        most_s = total_s + sum(d for d in added_s if d is not None)
    return Estimate(
        cells=len({cell.key() for cell in cells}),
        runs=len(cells),
        sysbench_s=sysbench_s,
        total_s=total_s,
        prepares=len(prepares),
        prepare_s=prepare_s,
        restarts=int((restarts or {}).get("restarts") or 0),
        restart_s=restart_s,
        restart_each_s=float((restarts or {}).get("each_s") or 0),
        restart_source=str((restarts or {}).get("each_source") or ""),
        restarts_exact=bool((restarts or {}).get("exact", True)),
        warmups=warmups,
        warm_s=int((servers or {}).get("warm_s") or 10) if warmups else 0,
        most_runs=len(cells) + len(added),
        most_s=most_s,
    )


def _auto_added(cells: Sequence[Cell], auto: Auto) -> list[float | None]:
    """The sysbench time of each run the auto modes may add at most: a search's points
    along each line (the cells alike but for the searched value), or the repeats up to
    repeats auto's maximum."""
    groups: dict[Any, list[Cell]] = {}
    searching = auto.threads is not None or auto.rate is not None
    for cell in cells:
        key = _line_key(cell) if searching else cell.key()
        groups.setdefault(key, []).append(cell)
    added: list[float | None] = []
    for members in groups.values():
        first = members[0]
        repeats = len([c for c in members if c.key() == first.key()])
        if auto.repeats is not None:
            repeats = max(repeats, auto.repeats.max)
        if auto.threads is not None:
            most = threads_search.most_runs(auto.threads, repeats)
        elif auto.rate is not None:
            most = rate_search.most_runs(auto.rate, repeats)
        else:
            most = repeats
        added += [_duration(first.options)] * max(most - len(members), 0)
    return added


def _line_key(cell: Cell) -> tuple[Any, ...]:
    options = sorted((k, str(v)) for k, v in cell.options.items() if k not in ("threads", "rate"))
    return (tuple(sorted(cell.settings.items())), tuple(options))


def _duration(options: Mapping[str, object]) -> float | None:
    time_s = float(str(options.get("time", 10)))
    return None if time_s == 0 else time_s


def _prepare_s(options: Mapping[str, object]) -> float:
    rows = int(str(options.get("tables", 1))) * int(str(options.get("table-size", 10_000)))
    return PREPARE_OVERHEAD_S + rows / PREPARE_ROWS_PER_S


def duration_text(seconds: float | None) -> str:
    """`45 s`, `12 min`, `3 h 20 min`; `unknown` for runs bounded by events."""
    if seconds is None:
        return "unknown (runs bounded by --events)"
    if seconds < 90:
        return f"{math.ceil(seconds)} s"
    minutes = math.ceil(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"
