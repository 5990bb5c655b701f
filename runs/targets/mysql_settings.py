"""The MySQL and MariaDB settings a plan may change: the allow-list with each value's
kind and range, the settings that need a restart (refused: SET GLOBAL cannot change them),
and an axis checked against them. runs/targets/postgres_settings.py is PostgreSQL's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from runs.errors import InvalidInput
from runs.targets.base import check_allow_list


@dataclass(frozen=True)
class Setting:
    """A dynamic GLOBAL variable benchdash may change, and how its values look."""

    name: str
    kind: str  # "int", "float", "bool"
    low: float = 0
    high: float = math.inf

    def normalise(self, value: object) -> str:
        """The canonical text of a value, or InvalidInput naming the setting."""
        text = str(value).strip()
        if self.kind == "bool":
            return self._bool(text)
        try:
            number = float(text) if self.kind == "float" else int(text)
        except ValueError:
            raise InvalidInput(self.name, f"{text!r} is not a number") from None
        if not self.low <= number <= self.high:
            raise InvalidInput(self.name, f"{text} is outside {self.low:g}..{self.high:g}")
        return f"{number:g}" if self.kind == "float" else str(number)

    def _bool(self, text: str) -> str:
        lowered = text.lower()
        if lowered in {"1", "on", "true"}:
            return "ON"
        if lowered in {"0", "off", "false"}:
            return "OFF"
        raise InvalidInput(self.name, f"{text!r} is not ON or OFF")

    def sql_value(self, canonical: str) -> int | float | str:
        if self.kind == "int":
            return int(canonical)
        if self.kind == "float":
            return float(canonical)
        return canonical


MYSQL_SETTINGS = {
    s.name: s
    for s in [
        Setting("innodb_flush_log_at_trx_commit", "int", 0, 3),
        Setting("sync_binlog", "int", 0, 4294967295),
        Setting("innodb_io_capacity", "int", 100, 2**64 - 1),
        Setting("innodb_io_capacity_max", "int", 100, 2**64 - 1),
        Setting("innodb_max_dirty_pages_pct", "float", 0, 99.999),
        Setting("innodb_thread_concurrency", "int", 0, 1000),
        Setting("innodb_spin_wait_delay", "int", 0, 6000),
        Setting("innodb_sync_spin_loops", "int", 0, 4294967295),
        Setting("innodb_adaptive_hash_index", "bool"),
        Setting("max_connections", "int", 10, 100000),
        # Prepared-statement tests hold threads x tables x statements (error 1461 beyond).
        Setting("max_prepared_stmt_count", "int", 0, 4194304),
    ]
}

# Often asked for, but fixed at server start: say so rather than "unknown".
NEEDS_RESTART = frozenset(
    {
        "innodb_log_file_size",
        "innodb_log_files_in_group",
        "innodb_buffer_pool_instances",
        "innodb_flush_method",
        "innodb_doublewrite",
        "log_bin",
        "innodb_page_size",
        "innodb_read_io_threads",
        "innodb_write_io_threads",
    }
)


def validate_mysql_settings(axes: Mapping[str, Iterable[object]]) -> dict[str, list[str]]:
    return check_allow_list(
        axes, allowed=MYSQL_SETTINGS, needs_restart=NEEDS_RESTART, kind="dynamic"
    )
