"""A change in percent as print sets it, one rule for every sentence benchdash writes: the
verdicts' intervals, the nightly check, its steps, re-runs and changes.

Pure: no Django, no I/O.
"""

from __future__ import annotations

# The minus sign of print (U+2212, not the hyphen-minus), escaped because the linter flags
# look-alike characters in the source.
MINUS = "\u2212"


def signed_pct(value: float | None) -> str:
    """-18 % as "\u221218 %" (a real minus sign, as in print), +2.4 %, ±0.0 % for what
    rounds to nothing; a whole percent from 10 % up; "" for no value."""
    if value is None:
        return ""
    digits = 0 if abs(value) >= 10 else 1
    text = f"{abs(value):.{digits}f} %"
    if float(f"{abs(value):.{digits}f}") == 0:
        return f"±{text}"
    return (MINUS if value < 0 else "+") + text
