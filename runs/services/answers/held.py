"""Stored answers held in the process's memory, by their etag.

A stored answer (stored_results.py) never changes: another answer has another etag. Read
from PostgreSQL on every request, the results page of 50 runs received and decoded 330 kB
of JSON, the API results of 200 runs 145 kB, the compare page 270 kB a side and 200
RunFigures made from it: about half of what each cost. A process now keeps the parts it
read last, already decoded, up to HELD_CHARS of their text, and PostgreSQL sends a part's
text only when the process does not hold its etag (stored_results.with_stored asks for it
by the etags held).

What is held is shared by every request of the process: read it, never change it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

# The text of the parts held, at most (their decoded values take a few times more). A
# 200-run batch's answer is 0.9 M characters (page 490 k, results 145 k, side 270 k).
HELD_CHARS = 24_000_000
# Parts held at most: their etags go into the query that reads an answer.
HELD_PARTS = 64
MISSING = object()

_held: OrderedDict[tuple[str, str], tuple[Any, int]] = OrderedDict()
_chars = [0]
_lock = threading.Lock()


def etags(part: str) -> list[str]:
    """The etags whose `part` this process holds."""
    with _lock:
        return [etag for etag, held_part in _held if held_part == part]


def value(etag: str, part: str) -> Any:
    """The part of the answer `etag` as held, or MISSING."""
    with _lock:
        found = _held.get((etag, part))
        if found is None:
            return MISSING
        _held.move_to_end((etag, part))
        return found[0]


def keep(etag: str, part: str, kept: Any, chars: int) -> None:
    """Keep `kept`, the part of the answer `etag` read from `chars` characters of text;
    the parts read longest ago make room."""
    if chars > HELD_CHARS // 4:
        return  # a giant answer would push out everything else: read it each time
    with _lock:
        previous = _held.pop((etag, part), None)
        _chars[0] -= previous[1] if previous else 0
        _held[(etag, part)] = (kept, chars)
        _chars[0] += chars
        while _chars[0] > HELD_CHARS or len(_held) > HELD_PARTS:
            _, (_, freed) = _held.popitem(last=False)
            _chars[0] -= freed


def forget_all() -> None:
    """Nothing held (tests that count queries start from here)."""
    with _lock:
        _held.clear()
        _chars[0] = 0
