"""How many prepared statements a sysbench test holds on the server (pure).

Each thread of an OLTP test prepares its statements once, in `thread_init`, and keeps them
for the whole run (/usr/share/sysbench/oltp_common.lua, `prepare_statements` of each
test): BEGIN and COMMIT unless --skip-trx, then one statement per kind and per table. A
MySQL or MariaDB server refuses the statement after `max_prepared_stmt_count` with error
1461, and the thread fails to start. With --db-ps-mode=disable nothing is prepared.
"""

from __future__ import annotations

from collections.abc import Mapping

_RANGES = 4  # simple, sum, order and distinct ranges (unless --range-selects=off)
_WRITES = 4  # index update, non-index update, delete, insert

# test -> (statements per table, without ranges; ranges per table; BEGIN/COMMIT)
_PER_TABLE: dict[str, tuple[int, int, bool]] = {
    "oltp_read_write": (1 + _WRITES, _RANGES, True),
    "oltp_read_only": (1, _RANGES, True),
    "oltp_write_only": (_WRITES, 0, True),
    "oltp_point_select": (1, 0, False),
    "oltp_update_index": (1, 0, False),
    "oltp_update_non_index": (1, 0, False),
    "oltp_delete": (1, 0, False),
}
# These prepare one statement per thread, on their single table.
_ONE_PER_THREAD = frozenset({"select_random_points", "select_random_ranges"})


def statements_per_thread(test: str, options: Mapping[str, object]) -> int:
    """The statements one thread of `test` prepares with these options (0: none)."""
    if str(options.get("db-ps-mode", "auto")) == "disable":
        return 0
    if test in _ONE_PER_THREAD:
        return 1
    if test not in _PER_TABLE:
        return 0
    per_table, ranges, transactions = _PER_TABLE[test]
    if _on(options.get("range-selects", True)):
        per_table += ranges
    begin_commit = 2 if transactions and not _on(options.get("skip-trx", False)) else 0
    return begin_commit + per_table * int(str(options.get("tables", 1)))


def prepared_statements(test: str, threads: int, options: Mapping[str, object]) -> int:
    """The statements a run holds on the server at once: every thread's."""
    return threads * statements_per_thread(test, options)


def _on(value: object) -> bool:
    return str(value).lower() in {"1", "on", "true", "yes"}
