"""sysbench command lines copied into old logs: what they say, and their passwords masked.
Pure."""

from __future__ import annotations

import re
import shlex
from typing import Any

from runs.sysbench.options import ALL_TESTS

# A sysbench command line copied into a log, after an optional shell prompt
# ("user@host:~$ ", "# ", "+ " of set -x).
COMMAND_LINE = re.compile(
    r"^(?:.*?[$#>]\s+|\+\s+)?(?:time\s+)?(?:\S*/)?sysbench\s+(?P<args>.+?)\s*$"
)
_SECRET = re.compile(r"""(--[\w-]*password(?:=|\s+))('[^']*'|"[^"]*"|\S+)""", re.IGNORECASE)
_PHASE_WORDS = frozenset({"prepare", "run", "cleanup", "help", "warmup", "prewarm"})
# Legacy and oltp_legacy option names -> their 1.0 names.
_OPTION_ALIASES = {
    "num-threads": "threads",
    "max-time": "time",
    "max-requests": "events",
    "oltp-tables-count": "tables",
    "oltp-table-size": "table-size",
    "tx-rate": "rate",
}
_LEGACY_TESTS = frozenset({"oltp", "select", "insert", "delete", "parallel_prepare", "oltp_simple"})


def redact_secrets(line: str) -> str:
    """The line with the value of every --*password option masked."""
    return _SECRET.sub(lambda m: m[1] + "***", line)


def read_command(args: str) -> dict[str, Any] | None:
    """What a sysbench command line copied into a log says, or None if it is not one.

    Returns {"text", "test", "phase", "options"}: option names in their 1.0 spelling
    (--num-threads is threads, --oltp-tables-count is tables...), values as text,
    passwords masked. Both --name=value and --name value are read.
    """
    try:
        tokens = shlex.split(args)
    except ValueError:  # an unbalanced quote
        tokens = args.split()
    if not tokens or not (tokens[-1] in _PHASE_WORDS or any(t.startswith("--") for t in tokens)):
        return None
    options: dict[str, str] = {}
    positional: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("--") or len(token) == 2:
            positional.append(token)
            continue
        name, equals, value = token[2:].partition("=")
        key = name.replace("_", "-").lower()
        if not equals:
            following = tokens[i] if i < len(tokens) else None
            takes = following is not None and not following.startswith("--")
            if takes and (key == "test" or not _is_positional(str(following))):
                value, i = str(following), i + 1
            else:
                value = "on"  # a flag such as --histogram
        options[_OPTION_ALIASES.get(key, key)] = "***" if "password" in key else value
    phase = positional[-1] if positional and positional[-1] in _PHASE_WORDS else None
    script = options.pop("test", None) or next(
        (p for p in positional if p not in _PHASE_WORDS), None
    )
    return {
        "text": redact_secrets("sysbench " + args),
        "test": _test_name(script) if script else None,
        "phase": phase,
        "options": options,
    }


def _is_positional(token: str) -> bool:
    name = _test_name(token)
    return (
        token in _PHASE_WORDS
        or token.endswith(".lua")
        or name in ALL_TESTS
        or name in _LEGACY_TESTS
    )


def _test_name(script: str) -> str:
    """`oltp_read_write`, `/usr/share/sysbench/oltp_insert.lua`, `tests/db/oltp.lua` ->
    the test's name (`oltp` for the legacy scripts)."""
    base = script.rstrip("/").rsplit("/", 1)[-1]
    return base[: -len(".lua")] if base.endswith(".lua") else base
