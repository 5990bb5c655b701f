"""A restart's settings read back: a value as the server shows it against the one asked
for (sizes, booleans and case aside), and a put-back's every setting against the server
as found (pure: no Django, no I/O)."""

from __future__ import annotations

import re
from collections.abc import Mapping

_SIZE = re.compile(r"([0-9]+)\s*([kmgt]?)b?", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_TRUE = {"on", "1", "true", "yes"}
_FALSE = {"off", "0", "false", "no"}


def same_value(wanted: str, shown: str) -> bool:
    """Whether the server shows what was asked for: case, sizes (32M = 33554432) and
    booleans (1 = ON) aside."""
    a, b = wanted.strip().lower(), shown.strip().lower()
    if a == b or (a in _TRUE and b in _TRUE) or (a in _FALSE and b in _FALSE):
        return True
    x, y = _SIZE.fullmatch(a), _SIZE.fullmatch(b)
    return bool(x and y) and _bytes(x) == _bytes(y)  # type: ignore[arg-type]


def _bytes(match: re.Match[str]) -> int:
    return int(match[1]) * _UNITS[match[2].lower()]


# Settings that move while a server runs or with each start, never a config's: left out
# when a put-back's settings are read back against the server as found.
MOVING = frozenset(
    {"gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos", "gtid_slave_pos", "timestamp"}
)


def came_back_unlike(found: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """Each setting the server shows after a put-back unlike it was found, said with
    both values (credentials are hidden in both: runs/credentials.py)."""
    return [
        f"{name} {now.get(name, 'gone')} (was {value})"
        for name, value in sorted(found.items())
        if name not in MOVING and now.get(name) != value
    ]
