"""The sysbench 1.0 tests and options benchdash accepts: the table of every option, its
kind, range and default, and the tests it applies to.

Nothing that is not listed here reaches a sysbench command line. Every value is checked
against its kind and range (values.py), and strings against a strict pattern.

Pure: no Django, no I/O.
"""

from __future__ import annotations

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
        raise InvalidInput(
            "test", f"unknown test {show_value(name)}; choose one of {join_names(ALL_TESTS)}"
        )
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
        raise InvalidInput("options", f"option names are strings, not {show_value(name)}")
    spec = OPTIONS.get(name)
    if spec is None:
        raise InvalidInput(name, f"unknown option {show_value(name)}{_did_you_mean(name)}")
    if test not in spec.tests:
        raise InvalidInput(name, f"not an option of test {test}")
    return spec


def _did_you_mean(name: str) -> str:
    guess = _ALIASES.get(name.lstrip("-").replace("_", "-")) or name.lstrip("-").replace("_", "-")
    return f" (did you mean {guess!r}?)" if guess in OPTIONS else ""


def show_value(value: object) -> str:
    """A value as a refusal names it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def join_names(names: tuple[str, ...]) -> str:
    return ", ".join(names)
