"""A run's axis values beyond its threads and server settings, read from its cell's key
(runs/sysbench/cells.py `Cell.key`): the option-axis values, and on a batch with a targets
axis its target, by name, an axis like a setting.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

TARGET = "target"  # the targets axis' name among a run's axis values


def run_axes(run: Any) -> dict[str, str]:
    """A run's axis values beyond its settings and threads: its option-axis values and, on
    a batch with a targets axis, its target by name (`target`), an axis like a setting.
    Read `run.target` with the runs (select_related) where many are read."""
    options = axis_options(run.cell_key)
    if target_on_axis(run.cell_key):
        target = getattr(run, "target", None)
        options[TARGET] = target.name if target is not None else f"target {run.target_id}"
    return options


def target_on_axis(cell_key: str) -> bool:
    """Whether the cell's key names its target: the plan had a targets axis."""
    try:
        identity = json.loads(cell_key)
    except (TypeError, ValueError):
        return False
    return isinstance(identity, dict) and TARGET in identity


def axis_options(cell_key: str) -> dict[str, str]:
    """The option-axis values of a cell, from its key (see matrix.Cell.key)."""
    try:
        identity = json.loads(cell_key)
    except (TypeError, ValueError):
        return {}
    options = identity.get("options") if isinstance(identity, dict) else None
    return {str(k): str(v) for k, v in options.items()} if isinstance(options, dict) else {}
