"""Which failures the next cells would repeat, read from real captured sysbench output and
from the words of the client libraries: a server gone away is waited for, an error no
retry cures stops the batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.execution.outages.target_wait import failure_kind
from runs.sysbench.parser import parse_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"


@pytest.mark.parametrize(
    ("fixture", "verdict"),
    [
        ("err_lost_connection", "unreachable"),
        ("err_connect_refused", "unreachable"),
        ("err_missing_table", "repeating"),
        ("err_access_denied", "repeating"),
        ("err_unknown_host", "repeating"),
        ("err_option_unknown", "repeating"),
        ("err_deadlock_midrun", ""),
        ("err_too_many_connections", ""),
    ],
)
def test_a_sysbench_failure_is_told_apart(fixture, verdict):
    exit_code = int((FIXTURES / f"{fixture}.exit").read_text())
    result = parse_text((FIXTURES / f"{fixture}.txt").read_text(), exit_code)
    error = result.primary_error
    assert error is not None

    assert failure_kind(error.kind, error.message) == verdict


@pytest.mark.parametrize(
    ("message", "verdict"),
    [
        ("127.0.0.1:3307: error 2002: Can't connect to server on '127.0.0.1' (115)", "unreachable"),
        ("127.0.0.1:5433: connection failed: Connection refused", "unreachable"),
        ("127.0.0.1:5433: FATAL:  the database system is starting up", "unreachable"),
        ("127.0.0.1:3307: error 1045: Access denied for user 'bench'@'localhost'", "repeating"),
        ('127.0.0.1:5433: FATAL:  password authentication failed for user "b"', "repeating"),
        ("innodb_flush_log_at_trx_commit is 1 after SET GLOBAL to 2", ""),
    ],
)
def test_a_target_error_is_told_apart(message, verdict):
    assert failure_kind("target", message) == verdict
