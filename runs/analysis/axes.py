"""A run's axis values beyond its threads and server settings, read from its cell's key
(runs/sysbench/cells.py `Cell.key`): the option-axis values, and on a batch with a targets
axis its target, by name, an axis like a setting; and the cell's test, install and config
where the plan varies them (`cell_axes`), which set a cell apart as much as a setting does.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from runs.errors import InvalidInput
from runs.sysbench.values import clean_options, render_value

TARGET = "target"  # the servers axis' name among a run's axis values
# The axes beyond settings and options a cell's key names when the plan varies them, in the
# order a label says them: which test, then which install and config of the server.
CELL_AXES = ("test", "install", "config")


def run_axes(run: Any) -> dict[str, str]:
    """A run's axis values beyond its settings and threads: its option-axis values and, on
    a batch with a servers axis, its target by name (`target`), an axis like a setting.
    Read `run.target` with the runs (select_related) where many are read."""
    identity = _identity(run.cell_key)  # parsed once for both (a batch reads 200)
    options = _options(identity)
    if _names_target(identity):
        target = getattr(run, "target", None)
        options[TARGET] = target.name if target is not None else f"target {run.target_id}"
    return options


def target_on_axis(cell_key: str) -> bool:
    """Whether the cell's key names its target: the plan had a servers axis."""
    return _names_target(_identity(cell_key))


def axis_options(cell_key: str) -> dict[str, str]:
    """The option-axis values of a cell, from its key (see matrix.Cell.key)."""
    return _options(_identity(cell_key))


def cell_axes(cell_key: str) -> dict[str, str]:
    """The cell's test, install and config, as its key names them (only the axes the plan
    varies: a plan without them has none). A test named twice on a tests axis with other
    options (oltp_read_only with ranges, and with sums) reads as its test and those options."""
    identity = _identity(cell_key)
    if not isinstance(identity, dict):
        return {}
    found = {name: str(identity[name]) for name in CELL_AXES if name in identity}
    given = identity.get("test_options")
    if "test" in found and isinstance(given, dict) and given:
        found["test"] = " ".join([found["test"], *(f"{k}={v}" for k, v in sorted(given.items()))])
    return found


def cell_axes_order(
    tests: Sequence[Mapping[str, Any]], servers: Mapping[str, Any]
) -> dict[str, list[str]]:
    """The plan's tests, installs and configs in its order, named as `cell_axes` names them
    (FrozenPlan.tests and .servers): its first of each is the baseline's."""
    order: dict[str, list[str]] = {}
    if len(tests) > 1:
        order["test"] = [_item_name(item) for item in tests]
    if servers.get("installs"):
        order["install"] = [str(v) for v in servers["installs"]]
    if servers.get("configs"):
        order["config"] = [
            str(c.get("label", "")) if isinstance(c, Mapping) else str(c)
            for c in servers["configs"]
        ]
    return order


def _item_name(item: Mapping[str, Any]) -> str:
    """A tests axis's item as its cells' keys name it: its test, and the options it sets."""
    test = str(item.get("test", ""))
    given = item.get("options") or {}
    try:
        cleaned = clean_options(test, dict(given))
    except (InvalidInput, TypeError, ValueError):
        return test
    shown = [f"{k}={_rendered(cleaned[k])}" for k in sorted(cleaned)]
    return " ".join([test, *shown])


def _rendered(value: object) -> str:
    return render_value(value) if isinstance(value, bool | int | float | str) else str(value)


def _identity(cell_key: str) -> Any:
    """The cell's key parsed; None when it is not JSON."""
    try:
        return json.loads(cell_key)
    except (TypeError, ValueError):
        return None


def _names_target(identity: Any) -> bool:
    return isinstance(identity, dict) and TARGET in identity


def _options(identity: Any) -> dict[str, str]:
    options = identity.get("options") if isinstance(identity, dict) else None
    return {str(k): str(v) for k, v in options.items()} if isinstance(options, dict) else {}
