"""Turn sysbench's error lines into a stable kind, the server's error code and a hint.

Pure: no Django, no I/O. The kinds are slugs that the UI and the API show and
filter on, so they never change meaning; the messages stay sysbench's own words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

KINDS = (
    "connect",
    "access_denied",
    "missing_table",
    "open_files",
    "too_many_connections",
    "unknown_host",
    "lua",
    "option",
    "thread_init",
    "pgsql_connect",
    "load_host",
    "other",
)


# The line the SSH executor adds when sysbench's output ended without an exit status.
LOAD_HOST_LOST = re.compile(r"the SSH connection to load host .+ was lost")


@dataclass(frozen=True)
class SysbenchError:
    kind: str
    message: str
    hint: str
    code: int | None


HINTS: dict[str, str] = {
    "connect": (
        "sysbench could not reach the database server: check that it is running and that "
        "the host, port or socket are right and reachable from the load host."
    ),
    "access_denied": (
        "The server refused the user or password: check the credentials and that the "
        "user may connect from the load host (user@host grants)."
    ),
    "missing_table": (
        "The table does not exist: run the prepare step with the same database, --tables "
        "and --table-size before running the test."
    ),
    "open_files": (
        "The load host ran out of file descriptors: raise `ulimit -n` for sysbench above "
        "the thread count (each thread holds one connection), or run fewer threads."
    ),
    "too_many_connections": (
        "The server refused more connections: raise max_connections on the server (or the "
        "user's MAX_USER_CONNECTIONS), or run fewer threads."
    ),
    "unknown_host": (
        "The database host name does not resolve on the load host: check the host name and DNS."
    ),
    "lua": (
        "The test script failed: check the test name or script path, and the script at "
        "the file and line shown."
    ),
    "option": (
        "sysbench rejected its command line: check the option names and values "
        "(1.0 spells them --threads, --time, --events, --tables, --table-size)."
    ),
    "thread_init": (
        "A worker thread failed to start; the error reported just before this one is the cause."
    ),
    "pgsql_connect": (
        "PostgreSQL refused the connection: check host, port, user, password and database, "
        "and pg_hba.conf on the server."
    ),
    "load_host": (
        "The load host stopped answering over SSH (its sshd or the machine went away): "
        "benchdash waits for it, bounded, and then drops the data set from the worker."
    ),
    "other": "sysbench stopped on this error; its message above says why.",
}

# Codes whose advice is narrower than their kind's.
CODE_HINTS: dict[int, str] = {
    1049: (
        "The database does not exist: create it (CREATE DATABASE sbtest) and run the prepare step."
    ),
    1062: (
        "A duplicate key stopped the run: the tables hold rows from an earlier run; run "
        "cleanup and prepare again."
    ),
    1205: (
        "A lock wait timed out and sysbench does not ignore it: add "
        "--mysql-ignore-errors=1205 or lower the concurrency."
    ),
    1213: (
        "The server aborted a transaction on a deadlock and sysbench does not ignore it: "
        "add --mysql-ignore-errors=1213 (the default ignores it) or lower the concurrency."
    ),
    1461: (
        "The server refused another prepared statement: max_prepared_stmt_count is reached. "
        "Every sysbench thread prepares its statements for every table (oltp_read_write: 9 "
        "a table, plus BEGIN and COMMIT), so threads x tables x statements must not exceed "
        "it: set max_prepared_stmt_count in the plan's server settings (it is put back "
        "after the batch), or run with --db-ps-mode=disable, fewer threads or fewer tables."
    ),
    2006: (
        "The server went away during the run (crash, restart, wait_timeout): check the "
        "server's error log."
    ),
    2013: (
        "The server closed the connection during the run (crash, restart or a killed "
        "connection): check the server's error log."
    ),
}

_CODE_KINDS: dict[int, str] = {
    1044: "access_denied",
    1045: "access_denied",
    1698: "access_denied",
    1146: "missing_table",
    1049: "missing_table",
    1040: "too_many_connections",
    1203: "too_many_connections",
    1226: "too_many_connections",
    2005: "unknown_host",
    2002: "connect",
    2003: "connect",
    2006: "connect",
    2013: "connect",
    2055: "connect",
}

# Where sysbench and the client libraries put the server's error number.
_CODE_PATTERNS = (
    re.compile(r"\berror (\d{4,5}):"),
    re.compile(r"\bMySQL error: (\d{4,5})\b"),
    re.compile(r"\breturned error (\d{4,5})\b"),
    re.compile(r"\berrno = (\d{4,5})\b"),
    re.compile(r"\bErr(\d{4,5})\b"),
)

# sysbench prints these without a FATAL prefix (to stderr) or as FATAL usage errors.
_OPTION_PATTERNS = (
    re.compile(r"^invalid option: "),
    re.compile(r"^Invalid value for "),
    re.compile(r"^Unknown command: "),
    re.compile(r"^Missing required argument: "),
    re.compile(r"^Too many checkpoints in "),
    re.compile(r"^invalid database driver name: "),
    re.compile(r"Command is required\. Supported commands: "),
)

# errno 24 (EMFILE) and 23 (ENFILE) from socket() show up as "(24)".
_OPEN_FILES = re.compile(r"Can't create (?:UNIX|TCP/IP) socket \((?:23|24)\)|Too many open files")
_LUA_LOCATION = re.compile(r"\.lua:\d+: ")
_FILEIO_NOT_PREPARED = re.compile(r"^Cannot open file '.*' errno = 2 ")
_MISSING_TABLE = re.compile(r"relation \S+ does not exist|Table \S+ doesn't exist")


# --- a run whose server went away ---------------------------------------------------------

SIGNALS = {2: "SIGINT", 6: "SIGABRT", 7: "SIGBUS", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
SERVER_GONE_HINT = (
    "The database server went away during the run (stopped, crashed, restarted, or cut off "
    "by the network): its log says why. benchdash waits for it, bounded, before the next cell."
)


def exit_text(code: int | None) -> str:
    """How sysbench ended, in words: `exited with code 1`, or a signal named (a process
    the worker started reports -11, one over SSH 139, for the same SIGSEGV)."""
    if code is None:
        return "ended without an exit status"
    signal = -code if code < 0 else code - 128 if 128 < code < 160 else None
    if signal is None:
        return f"exited with code {code}"
    name = SIGNALS.get(signal, "a signal")
    return f"was killed by signal {signal} ({name}, exit code {128 + signal})"


def server_gone(
    *,
    at: datetime,
    into_s: float | None,
    said: Sequence[str],
    exit_code: int | None,
    afterwards: str | None,
) -> SysbenchError:
    """The error of a run during which the server closed the connection: told by
    sysbench's own lines when it printed any (MySQL's 2013, libpq's "server closed the
    connection"), else by how it ended (pgsql: killed by SIGSEGV, no line) and a server
    that did not answer afterwards (`afterwards`: what the connection attempt said)."""
    into = f", {into_s:g} s into the run" if into_s is not None else ""
    head = f"the server closed the connection at about {at:%H:%M:%S} UTC{into}"
    how = "; ".join(said) if said else f"sysbench {exit_text(exit_code)} with no error line"
    tail = f"; it did not answer afterwards: {afterwards}" if afterwards else ""
    codes = [c for line in said if (c := error_code(line)) is not None]
    return SysbenchError(
        "connect", f"{head} ({how}){tail}", SERVER_GONE_HINT, codes[0] if codes else None
    )


def is_option_error(line: str) -> bool:
    """True for the command-line complaints sysbench prints without a log prefix."""
    return any(p.search(line) for p in _OPTION_PATTERNS)


def error_code(message: str) -> int | None:
    for pattern in _CODE_PATTERNS:
        match = pattern.search(message)
        if match:
            return int(match.group(1))
    return None


def classify(message: str, *, workers_starting: bool = False) -> SysbenchError:
    """Build the SysbenchError for one FATAL/ALERT message (prefix already removed).

    `workers_starting` tells that the line came after "Initializing worker threads...":
    a worker that cannot find the script the main thread just loaded has run out of
    file descriptors, not lost its script.
    """
    code = error_code(message)
    kind = _kind(message, code, workers_starting=workers_starting)
    return SysbenchError(kind=kind, message=message, hint=hint_for(kind, code, message), code=code)


def hint_for(kind: str, code: int | None, message: str) -> str:
    if code is not None and code in CODE_HINTS:
        return CODE_HINTS[code]
    if _FILEIO_NOT_PREPARED.search(message):
        return (
            "The fileio test files are missing: run `sysbench fileio prepare` with the same "
            "--file-num and --file-total-size, in the directory the run starts in."
        )
    if kind == "pgsql_connect":
        return _pgsql_hint(message)
    return HINTS.get(kind, HINTS["other"])


def _kind(message: str, code: int | None, *, workers_starting: bool) -> str:
    if LOAD_HOST_LOST.search(message):
        return "load_host"
    if message.startswith("Connection to database failed"):
        return "pgsql_connect"
    if _OPEN_FILES.search(message):
        return "open_files"
    if code is not None:
        return _CODE_KINDS.get(code, "other")
    return _kind_from_text(message, workers_starting=workers_starting)


def _kind_from_text(message: str, *, workers_starting: bool) -> str:
    checks = (
        (is_option_error(message), "option"),
        ("Too many connections" in message, "too_many_connections"),
        ("Access denied" in message, "access_denied"),
        ("Unknown server host" in message, "unknown_host"),
        (bool(_MISSING_TABLE.search(message)), "missing_table"),
        ("unable to connect to MySQL server" in message, "connect"),
        (message.startswith("Cannot find benchmark"), "open_files" if workers_starting else "lua"),
        ("`thread_init' function failed" in message, "thread_init"),
        (
            "failed to initialize" in message or "Thread initialization failed" in message,
            "thread_init",
        ),
        (bool(_LUA_LOCATION.search(message)) or "function failed" in message, "lua"),
        ("cannot find the event() function" in message, "lua"),
    )
    for matched, kind in checks:
        if matched:
            return kind
    return "other"


def _pgsql_hint(message: str) -> str:
    if "Connection refused" in message:
        return HINTS["connect"]
    if "password authentication failed" in message:
        return HINTS["access_denied"]
    if "does not exist" in message:
        return "The PostgreSQL database or role does not exist: create it and run prepare."
    if "too many clients" in message or "remaining connection slots" in message:
        return HINTS["too_many_connections"]
    if "could not translate host name" in message:
        return HINTS["unknown_host"]
    return HINTS["pgsql_connect"]
