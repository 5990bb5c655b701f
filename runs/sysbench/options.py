"""The sysbench 1.0 tests and options benchdash accepts, and how their values are checked.

Nothing that is not listed here reaches a sysbench command line. Every value is checked
against its kind and range, and strings against a strict pattern, because a plan's
options end up in argv on a load host (possibly through an SSH shell): a value such as
``; touch pwned`` or ``$(id)`` must be refused here, not escaped later.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from runs.errors import InvalidInput

OptionValue = int | float | bool | str


# --- tests ------------------------------------------------------------------------------

# The built-in Lua tests that include oltp_common.lua: they share its sbtest schema.
OLTP_TESTS: tuple[str, ...] = (
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_insert",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
)
# bulk_insert is a database test too, but with its own tables (see command.dataset_key).
SQL_TESTS: tuple[str, ...] = (*OLTP_TESTS, "bulk_insert")
NON_SQL_TESTS: tuple[str, ...] = ("cpu", "fileio", "memory", "threads", "mutex")
ALL_TESTS: tuple[str, ...] = (*SQL_TESTS, *NON_SQL_TESTS)

# These two assert --tables=1 in their prepare and cleanup.
SINGLE_TABLE_TESTS = frozenset({"select_random_points", "select_random_ranges"})


def is_sql_test(name: str) -> bool:
    return name in SQL_TESTS


def validate_test(name: object) -> str:
    if not isinstance(name, str) or name not in ALL_TESTS:
        raise InvalidInput("test", f"unknown test {_show(name)}; choose one of {_join(ALL_TESTS)}")
    return name


# --- option specs -----------------------------------------------------------------------


class Kind(StrEnum):
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"  # rendered on|off
    CHOICE = "choice"
    SIZE = "size"  # bytes with an optional K/M/G/T suffix (powers of 1024), as sysbench reads it
    LIST = "list"  # comma list of whole numbers or of choices, or one of `words` alone
    TEXT = "text"  # a string that must fully match `pattern`


@dataclass(frozen=True)
class OptionSpec:
    name: str  # sysbench 1.0 spelling, without the leading dashes
    kind: Kind
    tests: frozenset[str]
    help: str
    default: OptionValue | None = None  # sysbench's own default, None when it has none
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    pattern: str = ""
    expected: str = ""  # how a valid TEXT value looks, for error messages
    mysql_only: bool = False  # only meaningful against MySQL/MariaDB targets


INT_MAX = 2**31 - 1  # sysbench reads N options into a C int and refuses anything larger
_ALL = frozenset(ALL_TESTS)
_SQL = frozenset(SQL_TESTS)
_OLTP = frozenset(OLTP_TESTS)
_RW = frozenset({"oltp_read_write"})
_READS = frozenset({"oltp_read_write", "oltp_read_only"})
_WRITES = frozenset({"oltp_read_write", "oltp_write_only"})


def _specs() -> list[OptionSpec]:
    return [*_general_specs(), *_sql_specs(), *_oltp_specs(), *_builtin_specs()]


def _general_specs() -> list[OptionSpec]:
    return [
        OptionSpec("threads", Kind.INT, _ALL, "number of threads (connections for SQL tests)",
                   default=1, minimum=1, maximum=10_000),
        OptionSpec("time", Kind.INT, _ALL, "run time limit in seconds, 0 for none",
                   default=10, minimum=0, maximum=7 * 86_400),
        OptionSpec("events", Kind.INT, _ALL, "limit on the total number of events, 0 for none",
                   default=0, minimum=0, maximum=INT_MAX),
        OptionSpec("rate", Kind.INT, _ALL, "target transactions per second, 0 for unlimited",
                   default=0, minimum=0, maximum=INT_MAX),
        OptionSpec("report-interval", Kind.INT, _ALL,
                   "seconds between interval reports, 0 to disable", default=0, minimum=0,
                   maximum=3_600),
        OptionSpec("percentile", Kind.INT, _ALL,
                   "latency percentile to report (1-100), 0 to disable", default=95, minimum=0,
                   maximum=100),
        OptionSpec("histogram", Kind.BOOL, _ALL, "print a latency histogram in the report",
                   default=False),
        OptionSpec("report-checkpoints", Kind.LIST, _ALL,
                   "seconds after start at which to print a full report and reset the counters",
                   minimum=1, maximum=7 * 86_400),
        OptionSpec("forced-shutdown", Kind.TEXT, _ALL,
                   "seconds (or % of --time) to wait after --time before forcing shutdown",
                   default="off", pattern=r"off|[0-9]{1,6}%?",
                   expected="'off', a number of seconds, or a percentage such as 5%"),
        OptionSpec("rand-type", Kind.CHOICE, _ALL, "random numbers distribution",
                   default="special", choices=("uniform", "gaussian", "special", "pareto")),
        OptionSpec("rand-seed", Kind.INT, _ALL, "random generator seed, 0 to seed from the clock",
                   default=0, minimum=0, maximum=INT_MAX),
    ]  # fmt: skip


def _sql_specs() -> list[OptionSpec]:
    return [
        OptionSpec("db-ps-mode", Kind.CHOICE, _SQL, "prepared statements usage",
                   default="auto", choices=("auto", "disable")),
        # sysbench compares each entry with atoi(): "none" reads as 0, no server error code.
        OptionSpec("mysql-ignore-errors", Kind.LIST, _SQL,
                   "MySQL error codes to ignore, or 'all', or 'none'", default="1020,1205,1213",
                   minimum=1, maximum=99_999, words=("all", "none"), mysql_only=True),
    ]  # fmt: skip


def _oltp_specs() -> list[OptionSpec]:
    return [
        OptionSpec("tables", Kind.INT, _OLTP, "number of tables", default=1, minimum=1,
                   maximum=100_000),
        OptionSpec("table-size", Kind.INT, _OLTP, "number of rows per table", default=10_000,
                   minimum=1, maximum=INT_MAX),
        OptionSpec("range-size", Kind.INT, _READS, "range size for range SELECT queries",
                   default=100, minimum=1, maximum=INT_MAX),
        OptionSpec("point-selects", Kind.INT, _READS | {"oltp_point_select"},
                   "point SELECT queries per transaction", default=10, minimum=0,
                   maximum=1_000_000),
        OptionSpec("simple-ranges", Kind.INT, _READS, "simple range SELECTs per transaction",
                   default=1, minimum=0, maximum=1_000_000),
        OptionSpec("sum-ranges", Kind.INT, _READS, "SELECT SUM() queries per transaction",
                   default=1, minimum=0, maximum=1_000_000),
        OptionSpec("order-ranges", Kind.INT, _READS, "SELECT ORDER BY queries per transaction",
                   default=1, minimum=0, maximum=1_000_000),
        OptionSpec("distinct-ranges", Kind.INT, _READS,
                   "SELECT DISTINCT queries per transaction", default=1, minimum=0,
                   maximum=1_000_000),
        OptionSpec("range-selects", Kind.BOOL, _READS, "run the range SELECT queries at all",
                   default=True),
        OptionSpec("index-updates", Kind.INT, _WRITES | {"oltp_update_index"},
                   "UPDATEs of an indexed column per transaction", default=1, minimum=0,
                   maximum=1_000_000),
        OptionSpec("non-index-updates", Kind.INT, _WRITES | {"oltp_update_non_index"},
                   "UPDATEs of a non-indexed column per transaction", default=1, minimum=0,
                   maximum=1_000_000),
        OptionSpec("delete-inserts", Kind.INT, _WRITES,
                   "DELETE/INSERT pairs per transaction", default=1, minimum=0,
                   maximum=1_000_000),
        OptionSpec("skip-trx", Kind.BOOL, _READS | _WRITES,
                   "run in autocommit mode, without explicit transactions", default=False),
        OptionSpec("secondary", Kind.BOOL, _OLTP,
                   "use a secondary index in place of the primary key", default=False),
        OptionSpec("create-secondary", Kind.BOOL, _OLTP,
                   "create a secondary index in addition to the primary key", default=True),
        OptionSpec("auto-inc", Kind.BOOL, _OLTP,
                   "AUTO_INCREMENT primary key (off: client-generated ids)", default=True),
        OptionSpec("mysql-storage-engine", Kind.TEXT, _OLTP, "storage engine of the tables",
                   default="innodb", pattern=r"[A-Za-z][A-Za-z0-9_]{0,63}",
                   expected="an engine name such as innodb", mysql_only=True),
        OptionSpec("random-points", Kind.INT, frozenset({"select_random_points"}),
                   "random points in the IN() clause", default=10, minimum=1, maximum=100_000),
        OptionSpec("number-of-ranges", Kind.INT, frozenset({"select_random_ranges"}),
                   "BETWEEN ranges per SELECT", default=10, minimum=1, maximum=100_000),
        OptionSpec("delta", Kind.INT, frozenset({"select_random_ranges"}),
                   "size of each BETWEEN range", default=5, minimum=0, maximum=INT_MAX),
    ]  # fmt: skip


def _builtin_specs() -> list[OptionSpec]:
    cpu, fileio, memory = frozenset({"cpu"}), frozenset({"fileio"}), frozenset({"memory"})
    threads, mutex = frozenset({"threads"}), frozenset({"mutex"})
    tera = 2**50  # the largest size worth accepting
    return [
        OptionSpec("cpu-max-prime", Kind.INT, cpu, "upper limit of the primes generator",
                   default=10_000, minimum=3, maximum=INT_MAX),
        OptionSpec("file-num", Kind.INT, fileio, "number of files", default=128, minimum=1,
                   maximum=100_000),
        OptionSpec("file-total-size", Kind.SIZE, fileio, "total size of the files",
                   default="2G", minimum=1, maximum=tera),
        OptionSpec("file-block-size", Kind.SIZE, fileio, "block size of every I/O operation",
                   default="16384", minimum=1, maximum=2**30),
        OptionSpec("file-test-mode", Kind.CHOICE, fileio, "I/O pattern (required to run)",
                   choices=("seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw")),
        OptionSpec("file-io-mode", Kind.CHOICE, fileio, "file operations mode",
                   default="sync", choices=("sync", "async", "mmap")),
        OptionSpec("file-fsync-freq", Kind.INT, fileio,
                   "fsync() after this many requests, 0 never", default=100, minimum=0,
                   maximum=INT_MAX),
        OptionSpec("file-fsync-all", Kind.BOOL, fileio, "fsync() after every write",
                   default=False),
        OptionSpec("file-fsync-end", Kind.BOOL, fileio, "fsync() at the end of the test",
                   default=True),
        OptionSpec("file-fsync-mode", Kind.CHOICE, fileio, "synchronisation call",
                   default="fsync", choices=("fsync", "fdatasync")),
        OptionSpec("file-extra-flags", Kind.LIST, fileio, "extra flags to open the files with",
                   choices=("sync", "dsync", "direct")),
        OptionSpec("file-rw-ratio", Kind.FLOAT, fileio, "reads/writes ratio of rndrw",
                   default=1.5, minimum=0, maximum=1_000_000),
        OptionSpec("memory-block-size", Kind.SIZE, memory, "size of the memory block",
                   default="1K", minimum=1, maximum=2**34),
        OptionSpec("memory-total-size", Kind.SIZE, memory, "total data to transfer",
                   default="100G", minimum=1, maximum=tera),
        OptionSpec("memory-oper", Kind.CHOICE, memory, "type of memory operations",
                   default="write", choices=("read", "write", "none")),
        OptionSpec("memory-access-mode", Kind.CHOICE, memory, "memory access pattern",
                   default="seq", choices=("seq", "rnd")),
        OptionSpec("memory-scope", Kind.CHOICE, memory, "memory access scope",
                   default="global", choices=("global", "local")),
        OptionSpec("thread-yields", Kind.INT, threads, "yields per request", default=1000,
                   minimum=0, maximum=INT_MAX),
        OptionSpec("thread-locks", Kind.INT, threads, "locks per thread", default=8, minimum=1,
                   maximum=INT_MAX),
        OptionSpec("mutex-num", Kind.INT, mutex, "size of the mutex array", default=4096,
                   minimum=1, maximum=INT_MAX),
        OptionSpec("mutex-locks", Kind.INT, mutex, "mutex locks per thread", default=50_000,
                   minimum=0, maximum=INT_MAX),
        OptionSpec("mutex-loops", Kind.INT, mutex, "empty loops outside the mutex lock",
                   default=10_000, minimum=0, maximum=INT_MAX),
    ]  # fmt: skip


OPTIONS: dict[str, OptionSpec] = {spec.name: spec for spec in _specs()}

# Spellings people bring from older sysbench or from the Lua sources.
_ALIASES = {
    "num-threads": "threads",
    "max-time": "time",
    "max-requests": "events",
    "tx-rate": "rate",
    "oltp-tables-count": "tables",
    "oltp-table-size": "table-size",
}


def options_for(test: str) -> list[OptionSpec]:
    """The options a test accepts, in the order forms should show them."""
    validate_test(test)
    return [spec for spec in OPTIONS.values() if test in spec.tests]


def option_spec(test: str, name: object) -> OptionSpec:
    validate_test(test)
    if not isinstance(name, str):
        raise InvalidInput("options", f"option names are strings, not {_show(name)}")
    spec = OPTIONS.get(name)
    if spec is None:
        raise InvalidInput(name, f"unknown option {_show(name)}{_did_you_mean(name)}")
    if test not in spec.tests:
        raise InvalidInput(name, f"not an option of test {test}")
    return spec


def _did_you_mean(name: str) -> str:
    guess = _ALIASES.get(name.lstrip("-").replace("_", "-")) or name.lstrip("-").replace("_", "-")
    return f" (did you mean {guess!r}?)" if guess in OPTIONS else ""


# --- values -----------------------------------------------------------------------------


def clean_option(test: str, name: object, value: object) -> OptionValue:
    """Check one option of a test and return its canonical value.

    Canonical values compare equal when sysbench would read them the same way (4 and "4",
    True and "on", "8m" and "8M"), so duplicates can be found and keys stay stable.
    """
    spec = option_spec(test, name)
    cleaned = _CLEANERS[spec.kind](spec, value)
    if spec.name == "tables" and test in SINGLE_TABLE_TESTS and cleaned != 1:
        raise InvalidInput("tables", f"{test} works on a single table: tables must be 1")
    return cleaned


def clean_options(test: str, options: Mapping[str, object]) -> dict[str, OptionValue]:
    """Check a set of options; the result follows the whitelist order, so it is deterministic."""
    cleaned = {name: clean_option(test, name, value) for name, value in options.items()}
    return {name: cleaned[name] for name in OPTIONS if name in cleaned}


def render_value(value: OptionValue) -> str:
    """The text sysbench gets for a canonical value."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def size_in_bytes(text: str) -> int:
    """Read a canonical size the way sysbench does: K, M, G, T are powers of 1024."""
    match = _SIZE_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"not a size: {text!r}")
    digits, suffix = match.groups()
    power = "KMGT".index(suffix.upper()) + 1 if suffix else 0
    return int(digits) << (10 * power)


_INT_RE = re.compile(r"-?[0-9]{1,19}")
_FLOAT_RE = re.compile(r"-?[0-9]{1,19}(\.[0-9]{1,19})?")
_SIZE_RE = re.compile(r"([0-9]{1,19})([KMGTkmgt]?)")


def _clean_int(spec: OptionSpec, value: object) -> OptionValue:
    return _whole_number(spec, value)


def _whole_number(spec: OptionSpec, value: object) -> int:
    if isinstance(value, str) and _INT_RE.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(spec.name, f"{_show(value)} is not a whole number")
    _check_range(spec, value)
    return value


def _clean_float(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, str) and _FLOAT_RE.fullmatch(value):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput(spec.name, f"{_show(value)} is not a number")
    _check_range(spec, value)
    return float(value)


def _clean_bool(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    raise InvalidInput(spec.name, f"{_show(value)} is not on or off")


def _clean_choice(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, str) and value in spec.choices:
        return value
    raise InvalidInput(spec.name, f"{_show(value)} is not one of {_join(spec.choices)}")


def _clean_size(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    match = _SIZE_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidInput(
            spec.name, f"{_show(value)} is not a size (a number with an optional K, M, G or T)"
        )
    canonical = f"{int(match[1])}{match[2].upper()}"
    _check_range(spec, size_in_bytes(canonical), unit=" bytes")
    return canonical


def _clean_list(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, str) and value in spec.words:
        return value
    items = _list_items(spec, value)
    if spec.choices:
        for item in items:
            _clean_choice(spec, item)
        return ",".join(c for c in spec.choices if c in items)
    numbers = {_whole_number(spec, item) for item in items}
    return ",".join(str(n) for n in sorted(numbers))


def _list_items(spec: OptionSpec, value: object) -> list[object]:
    items: list[object]
    if isinstance(value, str):
        items = list(value.split(","))
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        items = []
    if not items or any(item in ("", *spec.words) for item in items):
        words = f", or one of {_join(spec.words)} alone" if spec.words else ""
        raise InvalidInput(spec.name, f"{_show(value)} is not a comma-separated list{words}")
    return items


def _clean_text(spec: OptionSpec, value: object) -> OptionValue:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str) and re.fullmatch(spec.pattern, value):
        return value
    raise InvalidInput(spec.name, f"{_show(value)} is not allowed: expected {spec.expected}")


_CLEANERS: dict[Kind, Callable[[OptionSpec, object], OptionValue]] = {
    Kind.INT: _clean_int,
    Kind.FLOAT: _clean_float,
    Kind.BOOL: _clean_bool,
    Kind.CHOICE: _clean_choice,
    Kind.SIZE: _clean_size,
    Kind.LIST: _clean_list,
    Kind.TEXT: _clean_text,
}


def _check_range(spec: OptionSpec, number: float, unit: str = "") -> None:
    if spec.minimum is not None and number < spec.minimum:
        raise InvalidInput(spec.name, f"must be at least {spec.minimum}{unit}, not {number}")
    if spec.maximum is not None and number > spec.maximum:
        raise InvalidInput(spec.name, f"must be at most {spec.maximum}{unit}, not {number}")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _join(names: tuple[str, ...]) -> str:
    return ", ".join(names)
