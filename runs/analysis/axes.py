"""A run's axis values beyond its threads and server settings, read from its cell's key
(runs/sysbench/cells.py `Cell.key`): the option-axis values, and on a batch with a targets
axis its target, by name, an axis like a setting.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

TARGET = "target"  # the servers axis' name among a run's axis values


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
