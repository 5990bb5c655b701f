"""Bidirectional control characters in user text, shown instead of obeyed.

U+202E (right-to-left override) in a comment makes "approve" read "evorppa", and a file
name "gnp.exe" read as "exe.png": whoever reads it is told something else than what was
typed. Every place that shows user text (the pages' `|shown` filter, the webhooks, the
mails) replaces these characters with a visible marker; what is stored stays as typed.

Pure: no Django, imported by every layer.
"""

from __future__ import annotations

import re

# LRE, RLE, PDF, LRO, RLO; LRI, RLI, FSI, PDI; LRM, RLM.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f]")
# The same characters as UTF-8 bytes (E2 80 AA-AE, E2 81 A6-A9, E2 80 8E-8F): a page is
# searched as it is sent, without decoding it first (2 ms for a results page of 400 kB).
BIDI_CONTROLS_UTF8 = re.compile(rb"\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def bidi_shown(text: str) -> str:
    """`text` with each bidirectional control replaced by its name, e.g. "[U+202E]"."""
    return BIDI_CONTROLS.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)
