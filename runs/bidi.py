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


def bidi_shown(text: str) -> str:
    """`text` with each bidirectional control replaced by its name, e.g. "[U+202E]"."""
    return BIDI_CONTROLS.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)
