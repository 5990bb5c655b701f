"""Numbers as people read them on the pages (the `num` filter, and the rows written
without the template engine: rows.py)."""

from __future__ import annotations

from typing import Any


def num(value: Any) -> str:
    """105980.12 → 105,980; 17.345 → 17.3; 0.284 → 0.28; None → "" (digits that matter)."""
    if value is None or value == "":
        return ""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    size = abs(number)
    if size >= 1000:
        return f"{number:,.0f}"
    if size >= 100:
        return f"{number:,.1f}"
    return f"{number:.2f}"


def ratio(value: Any) -> str:
    """A ratio to the baseline: 1.60; None → ""."""
    return "" if value is None or value == "" else f"{float(value):.2f}"
