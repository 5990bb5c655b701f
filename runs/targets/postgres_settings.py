"""The PostgreSQL settings a plan may change: those PostgreSQL takes on reload, with the
values each accepts and their units, compared in a canonical form."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from runs.errors import InvalidInput
from runs.targets.base import (
    check_allow_list,
)

# Units as PostgreSQL writes them, in milliseconds and in kilobytes.
_TIME_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "min": 60_000.0, "h": 3_600_000.0, "d": 8.64e7}


_MEMORY_KB = {"B": 1 / 1024, "kB": 1.0, "MB": 1024.0, "GB": 1024.0**2, "TB": 1024.0**3}


_QUANTITY = re.compile(r"([0-9]{1,15}(?:\.[0-9]{1,9})?)\s*([A-Za-z]{0,3})")


_PG_UNIT = re.compile(r"([0-9]*)([A-Za-z]+)")  # pg_settings.unit: "ms", "8kB", "MB"


_BOOLEANS = {"on": "on", "true": "on", "yes": "on", "1": "on"} | {
    "off": "off",
    "false": "off",
    "no": "off",
    "0": "off",
}


@dataclass(frozen=True)
class PgSetting:
    """A setting PostgreSQL takes on reload, and how its values look."""

    name: str
    kind: str  # "bool", "enum", "int", "time", "memory"
    low: float = 0
    high: float = math.inf
    unit: str = ""  # time and memory: the unit pg_settings reports, values are written in
    choices: tuple[str, ...] = ()

    def normalise(self, value: object) -> str:
        """The canonical text of a value ("on", "300s", "1024MB"), or InvalidInput."""
        text = str(value).strip()
        if self.kind == "bool":
            return self._choice(text.lower(), _BOOLEANS)
        if self.kind == "enum":
            return self._choice(text.lower(), {c: c for c in self.choices})
        if self.kind == "int":
            if not re.fullmatch(r"-?[0-9]{1,15}", text):
                raise InvalidInput(self.name, f"{text!r} is not a whole number")
            return str(self._in_range(int(text)))
        return self._quantity(text)

    def from_server(self, setting: str, unit: str | None) -> str:
        """The canonical text of a pg_settings row (`setting` counted in `unit`)."""
        if self.kind not in ("time", "memory") or not unit:
            return self.normalise(setting)
        m = _PG_UNIT.fullmatch(unit)
        if m is None:
            return f"{setting}{unit}"
        count = float(setting) * (int(m[1]) if m[1] else 1)
        amount = str(int(count)) if count.is_integer() else str(count)
        return self.normalise(f"{amount}{m[2]}")

    def _choice(self, text: str, allowed: Mapping[str, str]) -> str:
        if text not in allowed:
            names = ", ".join(sorted(set(allowed.values())))
            raise InvalidInput(self.name, f"{text!r} is not one of {names}")
        return allowed[text]

    def _quantity(self, text: str) -> str:
        m = _QUANTITY.fullmatch(text)
        scale = _TIME_MS if self.kind == "time" else _MEMORY_KB
        unit = (m[2] or self.unit) if m else ""
        if m is None or unit not in scale:
            units = ", ".join(scale)
            raise InvalidInput(self.name, f"{text!r} is not a number with a unit ({units})")
        amount = float(m[1]) * scale[unit] / scale[self.unit]
        if abs(amount - round(amount)) > 1e-9:
            raise InvalidInput(self.name, f"{text} is not a whole number of {self.unit}")
        return f"{self._in_range(round(amount))}{self.unit}"

    def _in_range(self, number: int) -> int:
        if not self.low <= number <= self.high:
            unit = self.unit
            raise InvalidInput(
                self.name, f"{number}{unit} is outside {self.low:g}{unit}..{self.high:g}{unit}"
            )
        return number


POSTGRES_SETTINGS = {
    s.name: s
    for s in [
        PgSetting(
            "synchronous_commit",
            "enum",
            choices=("on", "off", "local", "remote_write", "remote_apply"),
        ),
        PgSetting("commit_delay", "int", 0, 100_000),  # microseconds
        PgSetting("commit_siblings", "int", 0, 1000),
        PgSetting("wal_writer_delay", "time", 1, 10_000, unit="ms"),
        PgSetting("full_page_writes", "bool"),
        PgSetting("fsync", "bool"),
        # a boolean before PostgreSQL 15; the server refuses methods it was built without
        PgSetting("wal_compression", "enum", choices=("on", "off", "pglz", "lz4", "zstd")),
        PgSetting("checkpoint_timeout", "time", 30, 86_400, unit="s"),
        PgSetting("max_wal_size", "memory", 2, 2_147_483_647, unit="MB"),
        PgSetting("effective_io_concurrency", "int", 0, 1000),
    ]
}


POSTGRES_NEEDS_RESTART = frozenset(
    {
        "shared_buffers",
        "max_connections",
        "wal_buffers",
        "wal_level",
        "huge_pages",
        "max_wal_senders",
        "max_worker_processes",
    }
)


def validate_postgres_settings(axes: Mapping[str, Iterable[object]]) -> dict[str, list[str]]:
    return check_allow_list(
        axes, allowed=POSTGRES_SETTINGS, needs_restart=POSTGRES_NEEDS_RESTART, kind="reloadable"
    )


def canonical_setting(name: str, setting: Any, unit: Any) -> str:
    """An allow-listed setting in its canonical form, any other as pg_settings has it."""
    known = POSTGRES_SETTINGS.get(name)
    return known.from_server(setting, unit) if known else str(setting)


def settings_shown(rows: Iterable[tuple[Any, ...]]) -> dict[str, str]:
    """pg_settings rows as SHOW gives them: name → value with its unit."""
    return {str(row[0]): str(row[4]) for row in rows}
