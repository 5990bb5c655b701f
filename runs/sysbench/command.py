"""Building sysbench 1.0 command lines, and knowing which runs can share a data set.

The connection (host, port, socket, user, password, database, driver) goes into a
``--config-file`` and never into argv: argv is visible to every user of the load host
through ``ps`` and ends up in logs. sysbench 1.0.20 reads that file as ``name=value``
lines; driver options from it work, but test options (``cpu-max-prime``,
``table-size``...) are reset to their defaults when the test registers them, so those
stay on the command line.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from runs.errors import InvalidInput
from runs.sysbench.options import OLTP_TESTS, OPTIONS, Kind, OptionValue, is_sql_test, validate_test
from runs.sysbench.values import clean_options, render_value, size_in_bytes

PHASES = ("prepare", "run", "cleanup")
ENGINES = {"mysql": "mysql", "mariadb": "mysql", "postgresql": "pgsql"}  # engine → db-driver


@dataclass(frozen=True)
class Connection:
    engine: str  # "mysql" | "mariadb" | "postgresql"
    host: str  # empty when socket is used
    port: int | None
    socket: str  # "" if none
    database: str
    user: str
    password: str = dataclasses.field(repr=False)


@dataclass(frozen=True)
class SysbenchCommand:
    argv: list[str]
    config_text: str = dataclasses.field(repr=False)  # holds the password: keep it out of logs


# Which tests have a data set, and the options that define it. Runs whose options agree
# on these can share one prepare. All oltp_common tests (oltp_*, select_random_*) create
# the same sbtest tables, so they form one family; bulk_insert creates its own two-column
# tables, one per thread, so its data set is defined by the thread count.
_DATASET_OPTIONS: dict[str, tuple[str, ...]] = {
    "oltp": (
        "tables",
        "table-size",
        "secondary",
        "create-secondary",
        "auto-inc",
        "mysql-storage-engine",
    ),
    "bulk_insert": ("threads",),
    "fileio": ("file-num", "file-total-size"),
}
# cleanup drops tables by number and removes files by number: that is all it needs.
_CLEANUP_OPTIONS: dict[str, tuple[str, ...]] = {
    "oltp": ("tables",),
    "bulk_insert": ("threads",),
    "fileio": ("file-num",),
}

_PATH_RE = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]{0,4095}")
_LABEL_RE = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}")  # of a host name
_SOCKET_RE = re.compile(r"/[A-Za-z0-9_./-]{0,200}")
_NAME_RE = re.compile(r"[A-Za-z0-9_$-]{1,64}")  # database names
_USER_RE = re.compile(r"[A-Za-z0-9_.@%+-]{1,80}")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_CONFIG_LINE_MAX = 254  # sysbench reads lines with fgets(buf, 256): longer ones are split


def family(test: str) -> str:
    """The data-set family of a test: "oltp" for everything built on oltp_common."""
    return "oltp" if test in OLTP_TESTS else test


def has_dataset(test: str) -> bool:
    """Whether the test needs prepare and cleanup (cpu, memory, threads, mutex do not)."""
    return family(validate_test(test)) in _DATASET_OPTIONS


def dataset_reusable(test: str) -> bool:
    """Whether one prepare can serve several runs."""
    # bulk_insert inserts ids 1, 2, 3... on every run, so a second run on the same tables
    # fails with duplicate keys.
    return family(validate_test(test)) != "bulk_insert"


# The built-in tests that only read the data set: with a tests axis they run before the
# tests that change it, so every reader sees the data as prepared.
_READ_ONLY_TESTS = frozenset(
    {"oltp_read_only", "oltp_point_select", "select_random_points", "select_random_ranges"}
)


def changes_data(test: str) -> bool:
    """Whether a run of this test changes its data set (a custom script is assumed to)."""
    return test not in _READ_ONLY_TESTS


def dataset_key(test: str, options: Mapping[str, object]) -> tuple[str, ...]:
    """What identifies the data set a run needs; () for tests without one.

    Missing options count as sysbench's defaults and sizes count in bytes, so that
    ``{}`` and ``{"tables": 1}`` (or "1G" and "1024M") share a data set. The key reads
    like ``("oltp", "tables=1", "table-size=10000", ...)``: hashable, and a JSON list of
    strings that turns back into the same tuple.
    """
    cleaned = clean_options(test, options)
    names = _DATASET_OPTIONS.get(family(test))
    if names is None:
        return ()
    return (family(test), *(f"{name}={_key_value(name, cleaned)}" for name in names))


def _key_value(name: str, cleaned: Mapping[str, OptionValue]) -> str:
    spec = OPTIONS[name]
    value = cleaned.get(name, spec.default)
    assert value is not None, f"{name} has no default"
    if spec.kind is Kind.SIZE:
        return str(size_in_bytes(str(value)))
    return render_value(value)


def clean_run_options(test: str, options: Mapping[str, object]) -> dict[str, OptionValue]:
    """Check options for a run, including the rules that span several options."""
    cleaned = clean_options(test, options)
    if test == "fileio" and "file-test-mode" not in cleaned:
        raise InvalidInput("file-test-mode", "fileio needs a test mode to run")
    time = cleaned.get("time", OPTIONS["time"].default)
    if time == 0 and cleaned.get("events", 0) == 0:
        raise InvalidInput("time", "time and events cannot both be 0: the run would not stop")
    return cleaned


def build_command(
    *,
    test: str,
    phase: str,
    options: Mapping[str, object],
    connection: Connection | None,
    config_path: str,
    executable: str = "sysbench",
    script_path: str | None = None,
) -> SysbenchCommand:
    """The argv and config file for one sysbench phase; raises InvalidInput.

    prepare and cleanup get only the options that shape the data set, so the options of
    a whole cell can be passed for every phase. A custom Lua script (`script_path`, a
    file the executor placed) takes the place of the test name in argv; `test` still
    decides which options, phases and connection the script is run with.
    """
    test = validate_test(test)
    _check_phase(test, phase)
    cleaned = clean_run_options(test, options) if phase == "run" else clean_options(test, options)
    config_text = _config_text(test, connection)
    if connection is not None and is_sql_test(test):
        _check_engine_options(connection.engine, cleaned)
    argv = [
        _checked_path("executable", executable),
        f"--config-file={_checked_path('config_path', config_path)}",
        test if script_path is None else _checked_script(script_path),
        *(
            f"--{name}={render_value(value)}"
            for name, value in _phase_options(test, phase, cleaned)
        ),
        phase,
    ]
    return SysbenchCommand(argv=argv, config_text=config_text)


def _check_phase(test: str, phase: str) -> None:
    if phase not in PHASES:
        raise InvalidInput("phase", f"unknown phase {phase!r}; choose one of {', '.join(PHASES)}")
    if phase != "run" and not has_dataset(test):
        raise InvalidInput("phase", f"{test} has no data set: it has no {phase} phase")


def _phase_options(
    test: str, phase: str, cleaned: dict[str, OptionValue]
) -> list[tuple[str, OptionValue]]:
    if phase == "run":
        return list(cleaned.items())
    name = family(test)
    wanted = _prepare_names(name) if phase == "prepare" else _CLEANUP_OPTIONS[name]
    selected = {key: value for key, value in cleaned.items() if key in wanted}
    if phase == "prepare" and name == "oltp" and "threads" in selected:
        # Prepare works table by table: threads beyond the table count only hold idle
        # connections, and could hit max_connections before the run even starts.
        selected["threads"] = min(int(selected["threads"]), int(cleaned.get("tables", 1)))
    return list(selected.items())


def _prepare_names(family_name: str) -> tuple[str, ...]:
    # oltp prepare fills tables in parallel, one thread per table.
    extra = ("threads",) if family_name == "oltp" else ()
    return (*extra, *_DATASET_OPTIONS[family_name])


def _check_engine_options(engine: str, cleaned: Mapping[str, OptionValue]) -> None:
    if ENGINES.get(engine) == "mysql":
        return
    for name in cleaned:
        if OPTIONS[name].mysql_only:
            raise InvalidInput(name, "applies only to MySQL and MariaDB targets")


def _checked_script(path: str) -> str:
    # sysbench takes a name without ".lua" for one of its own tests: keep the suffix.
    if not path.endswith(".lua"):
        raise InvalidInput("script_path", f"{path!r} is not a .lua file")
    return _checked_path("script_path", path)


def _checked_path(field: str, path: str) -> str:
    if not isinstance(path, str) or not _PATH_RE.fullmatch(path):
        raise InvalidInput(field, f"{path!r} is not a plain path (letters, digits, _ . / -)")
    return path


# --- the config file --------------------------------------------------------------------


def _config_text(test: str, connection: Connection | None) -> str:
    if not is_sql_test(test):
        return ""  # nothing to connect to; an empty file is valid
    if connection is None:
        raise InvalidInput("target", f"{test} is a database test: it needs a target")
    lines = []
    for field, name, value in _config_entries(connection):
        line = f"{name}={value}"
        if len(line.encode()) > _CONFIG_LINE_MAX:
            raise InvalidInput(field, "is too long for a sysbench config file")
        lines.append(f"{line}\n")
    return "".join(lines)


def _config_entries(connection: Connection) -> list[tuple[str, str, str]]:
    """(field, config name, value) triples; the field names the culprit of an error."""
    driver = ENGINES.get(connection.engine)
    if driver is None:
        raise InvalidInput("engine", f"unknown engine {connection.engine!r}")
    user = _checked(connection.user, "user", _USER_RE)
    database = _checked(connection.database, "database", _NAME_RE)
    return [
        ("engine", "db-driver", driver),
        *_address(driver, connection),
        ("user", f"{driver}-user", _quoted("user", user)),
        ("password", f"{driver}-password", _quoted("password", _checked_password(connection))),
        ("database", f"{driver}-db", _quoted("database", database)),
    ]


def _address(driver: str, connection: Connection) -> list[tuple[str, str, str]]:
    if connection.socket and connection.host:
        raise InvalidInput("socket", "give a host or a socket, not both")
    if connection.socket:
        socket = _quoted("socket", _checked(connection.socket, "socket", _SOCKET_RE))
        # libpq takes a socket directory as its host; the mysql driver has its own option.
        return [("socket", f"{driver}-socket" if driver == "mysql" else "pgsql-host", socket)]
    if not connection.host:
        raise InvalidInput("host", "a host or a socket is required")
    host = _quoted("host", checked_host("host", connection.host))
    entries = [("host", f"{driver}-host", host)]
    if connection.port is not None:
        entries.append(("port", f"{driver}-port", str(checked_port("port", connection.port))))
    return entries


def check_connection(connection: Connection) -> None:
    """Refuse what neither sysbench nor a database driver can use, naming the field: the
    same checks as the config file's."""
    _config_entries(connection)


def checked_host(field: str, host: object) -> str:
    """A host name or an IP address, as the resolvers take it: `bad..host` is refused here
    rather than deep in a driver (whose IDNA codec raises UnicodeError on it)."""
    if not isinstance(host, str) or not host:
        raise InvalidInput(field, "give a host name or an IP address")
    if ":" in host:  # only an IPv6 address has colons
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise InvalidInput(field, f"{host!r} is not an IPv6 address") from None
        return host
    labels = host.removesuffix(".").split(".")
    if len(host) > 253 or not all(_LABEL_RE.fullmatch(label) for label in labels):
        raise InvalidInput(
            field,
            f"{host!r} is not a host name or an IP address: a name is labels of 1 to 63 "
            "letters, digits, - and _ joined by single dots, e.g. db1.example.com",
        )
    return host


def _checked(value: str, field: str, pattern: re.Pattern[str]) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise InvalidInput(field, f"{value!r} contains characters that are not allowed")
    return value


def checked_port(field: str, port: object) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise InvalidInput(field, f"{port!r} is not a port number (1-65535)")
    return port


def _checked_password(connection: Connection) -> str:
    # Unlike the other fields, the value itself is never repeated in a message.
    password = connection.password
    if not isinstance(password, str) or _CONTROL_RE.search(password):
        raise InvalidInput("password", "must not contain control characters such as newlines")
    return password


def _quoted(field: str, value: str) -> str:
    # sysbench splits unquoted values at commas, spaces and '#', and has no escapes: a
    # quoted value runs to the next quote of the same kind.
    for quote in ('"', "'"):
        if quote not in value:
            return f"{quote}{value}{quote}"
    raise InvalidInput(field, "cannot hold both ' and \" (sysbench config files have no escapes)")


def expected_duration_s(options: dict[str, Any]) -> float | None:
    """How long sysbench should run: --time (10 s by default), unless it counts events."""
    time_s = float(options.get("time", 10))
    if time_s == 0:
        return None  # bounded by --events: no duration to expect
    return time_s


# For the script command builder (script_command.py): the same checks, by public names.
checked_path = _checked_path
checked_script = _checked_script
config_text = _config_text
check_engine_options = _check_engine_options
