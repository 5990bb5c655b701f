"""An option's value checked and made canonical, as sysbench reads it: whole numbers,
floats, on/off, choices, sizes (K, M, G, T are powers of 1024), lists and strings against a
strict pattern, because a plan's options end up in argv on a load host (possibly through
an SSH shell): a value such as ``; touch pwned`` or ``$(id)`` must be refused here, not
escaped later. Which options exist, and of which kind, is options.py's table.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

from runs.errors import InvalidInput
from runs.sysbench.options import (
    OPTIONS,
    SINGLE_TABLE_TESTS,
    Kind,
    OptionSpec,
    OptionValue,
    join_names,
    option_spec,
    show_value,
)


def clean_option(test: str, name: object, value: object) -> OptionValue:
    """Check one option of a test and return its canonical value.

    Canonical values compare equal when sysbench would read them the same way (4 and "4",
    True and "on", "8m" and "8M"), so duplicates can be found and keys stay stable.
    """
    spec = option_spec(test, name)
    cleaned = _CLEANERS[spec.kind](spec, value)
    if spec.name == "tables" and test in SINGLE_TABLE_TESTS and cleaned != 1:
        raise InvalidInput("tables", f"{test} works on a single table: tables must be 1")
    return cleaned


def clean_options(test: str, options: Mapping[str, object]) -> dict[str, OptionValue]:
    """Check a set of options; the result follows the whitelist order, so it is deterministic."""
    cleaned = {name: clean_option(test, name, value) for name, value in options.items()}
    return {name: cleaned[name] for name in OPTIONS if name in cleaned}


def render_value(value: OptionValue) -> str:
    """The text sysbench gets for a canonical value."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def size_in_bytes(text: str) -> int:
    """Read a canonical size the way sysbench does: K, M, G, T are powers of 1024."""
    match = _SIZE_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"not a size: {text!r}")
    digits, suffix = match.groups()
    power = "KMGT".index(suffix.upper()) + 1 if suffix else 0
    return int(digits) << (10 * power)


_INT_RE = re.compile(r"-?[0-9]{1,19}")
_FLOAT_RE = re.compile(r"-?[0-9]{1,19}(\.[0-9]{1,19})?")
_SIZE_RE = re.compile(r"([0-9]{1,19})([KMGTkmgt]?)")


def _clean_int(spec: OptionSpec, value: object) -> OptionValue:
    return _whole_number(spec, value)


def _whole_number(spec: OptionSpec, value: object) -> int:
    if isinstance(value, str) and _INT_RE.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(spec.name, f"{show_value(value)} is not a whole number")
    _check_range(spec, value)
    return value


def _clean_float(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, str) and _FLOAT_RE.fullmatch(value):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput(spec.name, f"{show_value(value)} is not a number")
    _check_range(spec, value)
    return float(value)


def _clean_bool(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    raise InvalidInput(spec.name, f"{show_value(value)} is not on or off")


def _clean_choice(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, str) and value in spec.choices:
        return value
    raise InvalidInput(spec.name, f"{show_value(value)} is not one of {join_names(spec.choices)}")


def _clean_size(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    match = _SIZE_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidInput(
            spec.name, f"{show_value(value)} is not a size (a number with an optional K, M, G or T)"
        )
    canonical = f"{int(match[1])}{match[2].upper()}"
    _check_range(spec, size_in_bytes(canonical), unit=" bytes")
    return canonical


def _clean_list(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, str) and value in spec.words:
        return value
    items = _list_items(spec, value)
    if spec.choices:
        for item in items:
            _clean_choice(spec, item)
        return ",".join(c for c in spec.choices if c in items)
    numbers = {_whole_number(spec, item) for item in items}
    return ",".join(str(n) for n in sorted(numbers))


def _list_items(spec: OptionSpec, value: object) -> list[object]:
    items: list[object]
    if isinstance(value, str):
        items = list(value.split(","))
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        items = []
    if not items or any(item in ("", *spec.words) for item in items):
        words = f", or one of {join_names(spec.words)} alone" if spec.words else ""
        raise InvalidInput(spec.name, f"{show_value(value)} is not a comma-separated list{words}")
    return items


def _clean_text(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str) and re.fullmatch(spec.pattern, value):
        return value
    raise InvalidInput(spec.name, f"{show_value(value)} is not allowed: expected {spec.expected}")


_CLEANERS: dict[Kind, Callable[[OptionSpec, object], OptionValue]] = {
    Kind.INT: _clean_int,
    Kind.FLOAT: _clean_float,
    Kind.BOOL: _clean_bool,
    Kind.CHOICE: _clean_choice,
    Kind.SIZE: _clean_size,
    Kind.LIST: _clean_list,
    Kind.TEXT: _clean_text,
}


def _check_range(spec: OptionSpec, number: float, unit: str = "") -> None:
    if spec.minimum is not None and number < spec.minimum:
        raise InvalidInput(spec.name, f"must be at least {spec.minimum}{unit}, not {number}")
    if spec.maximum is not None and number > spec.maximum:
        raise InvalidInput(spec.name, f"must be at most {spec.maximum}{unit}, not {number}")


# Each kind's cleaner, for options that are not in the table: a custom script's own
# options, discovered from the script (script_options.py).
CLEANERS = _CLEANERS
