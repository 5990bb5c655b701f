"""A run whose server went away, in words (runs/sysbench/errors.py): how sysbench ended, and
"the server closed the connection at ..." from sysbench's own lines or, when its pgsql
driver printed none and crashed, from its exit and the server's silence afterwards. On
real captured output: a PostgreSQL stopped (pg_ctl stop -m fast) 2.5 s into a run, and a
MariaDB that went away mid-run."""

from __future__ import annotations

from datetime import UTC, datetime

from runs.sysbench.errors import SERVER_GONE_HINT, exit_text, server_gone
from tests.sysbench.test_parser import parse

AT = datetime(2026, 11, 27, 6, 50, 13, tzinfo=UTC)


def test_a_signal_is_named_whether_the_worker_or_ssh_reports_it():
    assert exit_text(-11) == exit_text(139) == "was killed by signal 11 (SIGSEGV, exit code 139)"
    assert exit_text(1) == "exited with code 1"
    assert exit_text(None) == "ended without an exit status"
    assert exit_text(-9) == "was killed by signal 9 (SIGKILL, exit code 137)"


def test_a_postgresql_stopped_mid_run_leaves_no_line_only_a_crash():
    result = parse("err_pgsql_server_stopped")
    assert result.errors == [] and result.exit_code == 139
    into = result.samples[-1].time_s

    gone = server_gone(
        at=AT, into_s=into, said=[], exit_code=result.exit_code,
        afterwards='connection to server at "127.0.0.1", port 5999 failed: Connection refused',
    )  # fmt: skip

    assert gone.kind == "connect" and gone.hint == SERVER_GONE_HINT
    assert gone.message == (
        "the server closed the connection at about 06:50:13 UTC, 2 s into the run (sysbench "
        "was killed by signal 11 (SIGSEGV, exit code 139) with no error line); it did not "
        'answer afterwards: connection to server at "127.0.0.1", port 5999 failed: '
        "Connection refused"
    )
    assert "(other)" not in gone.message


def test_a_mariadb_gone_mid_run_is_told_with_sysbenchs_own_lines():
    result = parse("err_lost_connection")
    said = list(dict.fromkeys(e.message for e in result.errors))

    gone = server_gone(at=AT, into_s=2.0, said=said, exit_code=1, afterwards=None)

    assert gone.message.startswith(
        "the server closed the connection at about 06:50:13 UTC, 2 s into the run "
        "(mysql_stmt_execute() returned error 2013 (Lost connection to server during query)"
    )
    assert gone.code == 2013 and "did not answer afterwards" not in gone.message
