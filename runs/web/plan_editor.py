"""The plan editor's side of a plan: its matrix as form fields, and back.

A form posts flat fields: `threads=1,2,4`, `opt_time=60`, checkboxes `set__sync_binlog=0`
and `set__sync_binlog=1`, rows of other settings (`setting_name_0`, `setting_values_0`),
of option axes (`axis_name_0`, `axis_values_0`) and of the servers axis's configs
(`config_label_0`, `config_text_0`). This module turns them into the plan's JSON fields,
and a plan into the values the editor shows (plan_estimate.py says how long a batch would
take). Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from runs.errors import InvalidInput
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
