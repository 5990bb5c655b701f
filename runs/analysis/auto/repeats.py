"""Repeats auto (the plan's `auto.repeats`): one more repeat of a cell while the 95 %
confidence interval of its mean is wider than the target, up to a maximum.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from runs.analysis.auto.cells import CellFigures, half_width_pct
from runs.analysis.auto.settings import RepeatsAuto


def repeat_step(cell: CellFigures, auto: RepeatsAuto, label: str) -> str | None:
    """Why one more repeat of a cell is due, or None when its mean is clear enough."""
    if cell.attempts >= auto.max:
        return None
    noise = half_width_pct(cell.values)
    if noise is None:
        return f"repeat {cell.attempts + 1} of {label}: too few finished repeats to measure noise"
    if noise <= auto.target_pct:
        return None
    return f"repeat {cell.attempts + 1} of {label}: ±{noise:.1f} % > target ±{auto.target_pct:g} %"


def repeats_conclusion(cell: CellFigures, auto: RepeatsAuto) -> str:
    """`±1.2 % after 3 repeats`, or the honest `still noisy (±6.0 %) after 5 repeats`."""
    noise = half_width_pct(cell.values)
    shown = "unknown" if noise is None else f"±{noise:.1f} %"
    if noise is not None and noise <= auto.target_pct:
        return f"{shown} after {len(cell.values)} repeats"
    return f"still noisy ({shown}) after {len(cell.values)} repeats"
