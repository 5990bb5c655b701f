"""Preflight against a real sshd, real sysbench and real MariaDB servers: every check names
its host and says what to do."""

from __future__ import annotations

import resource
import socket
import uuid
from collections.abc import Iterator

import pytest

from runs.execution import worker_limits
from runs.models import Plan, Target
from runs.services.plans import plan_preflight
from tests.helpers import server_variable, wait_until
from tests.servers import SSHKey

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def checks(report) -> dict[tuple[str, str], tuple[str, str]]:
    return {(c.host, c.check): (c.status, c.message) for c in report.checks}


def failed(report) -> dict[tuple[str, str], str]:
    return {(c.host, c.check): c.message for c in report.checks if c.status == "failed"}


def test_a_sound_plan_on_an_ssh_host_passes_every_check(make_plan, ssh_host, target):
    plan = make_plan(load_host=ssh_host, threads=[1, 4])

    report = plan_preflight(plan=plan)

    assert report.ok, report.to_dict()
    assert [(c.host, c.check) for c in report.checks] == [
        ("loadhost-1", "ssh"),
        ("loadhost-1", "sysbench"),
        ("loadhost-1", "open_files"),
        ("loadhost-1", "target"),
        ("private-mariadb", "max_connections"),
        ("private-mariadb", "inside"),
    ]
    assert checks(report)[("loadhost-1", "sysbench")] == ("ok", "sysbench 1.0.20")
    assert report.to_dict()["ok"] is True
    assert report.to_dict()["checks"][0]["host"] == "loadhost-1"
    ssh_host.refresh_from_db()
    assert ssh_host.facts["sysbench_version"] == "sysbench 1.0.20"


def test_an_open_file_limit_too_low_for_the_threads_fails(make_plan, make_ssh_host):
    host = make_ssh_host("loadhost-low", command='ulimit -n 20; exec sh -c "$SSH_ORIGINAL_COMMAND"')
    plan = make_plan(load_host=host, threads=[2, 12])

    report = plan_preflight(plan=plan)

    assert not report.ok
    assert failed(report) == {
        ("loadhost-low", "open_files"): (
            "threads=12 needs at least 22 open files; the hard limit on loadhost-low is 20; "
            "raise it (nofile in /etc/security/limits.conf, or LimitNOFILE= of the service) "
            "or use fewer threads"
        )
    }


def test_a_load_host_without_sysbench_fails_and_stops_there(make_plan, make_ssh_host, sshd_server):
    path = sshd_server.path_without("sysbench")
    host = make_ssh_host(
        "loadhost-bare", command=f'export PATH={path}; exec sh -c "$SSH_ORIGINAL_COMMAND"'
    )

    report = plan_preflight(plan=make_plan(load_host=host))

    message = failed(report)[("loadhost-bare", "sysbench")]
    assert message.startswith("sysbench is not installed on load host 'loadhost-bare'")
    assert "apt-get install sysbench" in message
    assert ("loadhost-bare", "target") not in checks(report), "no sysbench: nothing to run it"


def test_a_changed_host_key_fails_the_ssh_check(make_plan, make_ssh_host):
    host = make_ssh_host("loadhost-1", host_key=SSHKey.generate().public)

    report = plan_preflight(plan=make_plan(load_host=host))

    message = failed(report)[("loadhost-1", "ssh")]
    assert message.startswith("the host key of loadhost-1 changed: expected SHA256:")
    assert [c.check for c in report.checks if c.host == "loadhost-1"] == ["ssh"]


def test_the_target_is_checked_from_the_load_host_with_the_plans_credentials(
    make_plan, ssh_host, target
):
    target.password = "not-the-password"
    target.save()

    report = plan_preflight(plan=make_plan(load_host=ssh_host))

    message = failed(report)[("loadhost-1", "target")]
    assert message.startswith(
        f"sysbench on loadhost-1 cannot log in to private-mariadb ({target.address}) as bench:"
    )
    assert "1045" in message and "Access denied" in message
    assert "not-the-password" not in str(report.to_dict())
    assert "the worker cannot log in" in failed(report)[("private-mariadb", "worker_login")]


def test_an_unreachable_target_port_is_named(make_plan, ssh_host, target, free_port):
    target.port = free_port
    target.save()

    report = plan_preflight(plan=make_plan(load_host=ssh_host))

    message = failed(report)[("loadhost-1", "target")]
    assert f"127.0.0.1:{free_port}" in message
    assert "Can't connect" in message


def test_threads_above_max_connections_fail(make_plan, ssh_host, mariadb_server):
    plan = make_plan(load_host=ssh_host, threads=[1, mariadb_server.max_connections])

    report = plan_preflight(plan=plan)

    message = failed(report)[("private-mariadb", "max_connections")]
    assert f"but max_connections is {mariadb_server.max_connections}" in message


def test_sync_binlog_without_binary_logging_is_a_warning(
    transactional_db, ssh_host, mariadb_nobinlog_server
):
    target = Target.objects.create(
        name="no-binlog",
        engine="mariadb",
        host="127.0.0.1",
        port=mariadb_nobinlog_server.port,
        database=mariadb_nobinlog_server.create_database("preflight_nobinlog"),
        user=mariadb_nobinlog_server.user,
        password=mariadb_nobinlog_server.password,
    )
    plan = Plan.objects.create(
        name="binlog off",
        target=target,
        load_host=ssh_host,
        test="oltp_insert",
        threads=[1],
        server_settings={"sync_binlog": ["0", "1"]},
    )
    try:
        report = plan_preflight(plan=plan)
    finally:
        mariadb_nobinlog_server.drop_database("preflight_nobinlog")

    assert report.ok
    assert checks(report)[("no-binlog", "binlog")] == (
        "warning",
        "sync_binlog has no effect: binary logging is off (log_bin=OFF)",
    )


@pytest.mark.parametrize(("size", "ok"), [("16M", True), ("1024T", False)])
def test_fileio_needs_free_disk_on_the_load_host(make_plan, ssh_host, size, ok):
    plan = make_plan(
        load_host=ssh_host,
        target=None,
        test="fileio",
        options={"file-total-size": size, "file-test-mode": "seqwr", "time": 1},
    )

    report = plan_preflight(plan=plan)

    status, message = checks(report)[("loadhost-1", "disk")]
    assert (status == "ok") is ok
    if not ok:
        assert message.startswith("fileio needs 1048576.0 GiB for its files; the working")


def test_a_script_plan_on_the_local_host_fails_naming_the_load_host_where_that_is_off(
    make_plan, transactional_db, django_user_model, settings
):
    from runs.models import LuaScript

    settings.BENCHDASH_LOCAL_SCRIPTS = False
    script = LuaScript.objects.create(name="mine", content="function event() end\n")

    report = plan_preflight(plan=make_plan(script=script))

    assert not report.ok
    message = failed(report)[(report.checks[0].host, "plan")]
    assert message.startswith("load_host: custom Lua scripts run on SSH load hosts only")


def test_the_database_servers_own_host_adds_its_facts(make_plan, ssh_host, target, make_ssh_host):
    target.server_host = make_ssh_host("db-host")
    target.save()

    report = plan_preflight(plan=make_plan(load_host=ssh_host))

    status, message = checks(report)[("db-host", "server_host")]
    assert status == "ok" and "cores" in message


def test_an_unreachable_database_host_is_only_a_warning(
    make_plan, ssh_host, target, make_ssh_host, free_port
):
    target.server_host = make_ssh_host("db-host", port=free_port)
    target.save()

    report = plan_preflight(plan=make_plan(load_host=ssh_host))

    assert report.ok
    status, message = checks(report)[("db-host", "server_host")]
    assert status == "warning" and "connection refused" in message


def test_the_local_host_is_checked_without_ssh(make_plan, target):
    report = plan_preflight(plan=make_plan())

    assert report.ok, report.to_dict()
    assert [c.check for c in report.checks] == [
        "sysbench",
        "open_files",
        "target",
        "max_connections",
        "inside",
    ]
    assert checks(report)[("private-mariadb", "inside")] == (
        "warning",
        "performance_schema is off: no wait events or statement digests; to enable them: "
        "performance_schema=ON in the server's configuration, and a restart",
    )


def test_preflight_counts_the_max_connections_the_cells_will_set(make_plan, mariadb_server):
    threads = mariadb_server.max_connections
    plan = make_plan(threads=[1, threads], server_settings={"max_connections": ["64"]})

    report = plan_preflight(plan=plan)

    assert report.ok, report.to_dict()
    assert checks(report)[("private-mariadb", "max_connections")] == (
        "ok",
        f"max_connections=64 holds threads={threads}",
    )


# --- the server's fsync timing, for the why panel ------------------------------------------

PS_OFF = (
    "the why panel cannot time fsyncs: performance_schema is off; to read it: set "
    "performance_schema=ON under [mariadbd] or [mysqld] in the server's my.cnf and restart "
    "the server: it cannot be turned on at run time"
)


def test_a_plan_comparing_settings_hears_that_performance_schema_is_off(make_plan):
    plan = make_plan(server_settings={"innodb_flush_log_at_trx_commit": ["0", "1"]})

    report = plan_preflight(plan=plan)

    assert report.ok, report.to_dict()  # a warning: the batch runs, the panel says less
    assert checks(report)[("private-mariadb", "fsync_timing")] == ("warning", PS_OFF)


def ps_target(server, database: str, user: str, password: str) -> Target:
    return Target.objects.create(
        name="ps-mariadb", engine="mariadb", host="127.0.0.1", port=server.port,
        database=database, user=user, password=password,
    )  # fmt: skip


@pytest.fixture
def ps_database(mariadb_ps_server) -> Iterator[str]:
    name = mariadb_ps_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    yield name
    mariadb_ps_server.drop_database(name)


def test_an_account_that_may_not_read_performance_schema_is_given_the_grant(
    transactional_db, local_host, mariadb_ps_server, ps_database
):
    user = f"r{uuid.uuid4().hex[:8]}"
    mariadb_ps_server.execute(
        f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'pw'",
        f"GRANT ALL ON `{ps_database}`.* TO '{user}'@'127.0.0.1'",
    )
    target = ps_target(mariadb_ps_server, ps_database, user, "pw")
    plan = Plan.objects.create(
        name="grant", target=target, load_host=local_host, test="oltp_insert", threads=[1],
        server_settings={"sync_binlog": ["0", "1"]},
    )  # fmt: skip
    try:
        report = plan_preflight(plan=plan)
    finally:
        mariadb_ps_server.execute(f"DROP USER '{user}'@'127.0.0.1'")

    assert checks(report)[("ps-mariadb", "fsync_timing")] == (
        "warning",
        f"the why panel cannot time fsyncs: the account '{user}'@'127.0.0.1' may not read "
        f"performance_schema (error 1142); to read it: GRANT SELECT ON performance_schema.* "
        f"TO '{user}'@'127.0.0.1'",
    )


def test_a_readable_fsync_timing_is_ok_and_a_single_series_is_not_checked(
    transactional_db, local_host, mariadb_ps_server, ps_database
):
    target = ps_target(mariadb_ps_server, ps_database, "bench", mariadb_ps_server.password)
    make = {"target": target, "load_host": local_host, "test": "oltp_insert", "threads": [1, 2]}
    pair = Plan.objects.create(name="pair", server_settings={"sync_binlog": ["0", "1"]}, **make)
    single = Plan.objects.create(name="single", server_settings={"sync_binlog": ["1"]}, **make)

    assert checks(plan_preflight(plan=pair))[("ps-mariadb", "fsync_timing")] == (
        "ok",
        "the server times its fsyncs (performance_schema is on and readable)",
    )
    assert ("ps-mariadb", "fsync_timing") not in checks(plan_preflight(plan=single))
    assert checks(plan_preflight(plan=single))[("ps-mariadb", "inside")] == (
        "ok",
        "the server's wait events and digests are read",
    )


def test_a_postgres_target_without_pg_stat_statements_hears_the_statements_that_install_it(
    transactional_db, local_host, postgres_server
):
    with postgres_server.connect() as admin:
        admin.execute("DROP DATABASE IF EXISTS preflight_inside")
        admin.execute("CREATE DATABASE preflight_inside")
    target = Target.objects.create(
        name="pg", engine="postgresql", host=postgres_server.host, port=postgres_server.port,
        database="preflight_inside", user=postgres_server.user, password="",
    )  # fmt: skip
    plan = Plan.objects.create(
        name="pg", target=target, load_host=local_host, test="oltp_read_only", threads=[1]
    )

    assert checks(plan_preflight(plan=plan))[("pg", "inside")] == (
        "warning",
        "pg_stat_statements is not installed in the target database: no digests; to enable "
        "them: ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'; restart the "
        "server; then in the target database: CREATE EXTENSION pg_stat_statements;",
    )


def test_the_editors_preflight_checks_the_benchmarks_workers_open_file_limit(
    make_plan, target, worker_process
):
    """The editor runs in this process, whose limit is high; the worker's is 40: sysbench
    on the local load host inherits the worker's, so the worker's decides."""
    worker = socket.gethostname()
    worker_process("lowfiles", nofile=40)
    wait_until(
        lambda: f"lowfiles@{worker}" in worker_limits.reported_open_files(),
        60,
        "the worker's report of its open-file limit",
    )
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[1] > 42

    report = plan_preflight(
        plan=make_plan(threads=[1, 32], server_settings={"max_connections": ["64"]})
    )

    assert failed(report) == {
        ("local", "open_files"): (
            f"threads=32 needs at least 42 open files; the hard limit of the benchmarks worker "
            f"lowfiles@{worker} is 40; raise it (nofile in /etc/security/limits.conf, or "
            "LimitNOFILE= of the service) or use fewer threads"
        )
    }


def test_the_editors_preflight_says_when_no_worker_reported_its_limit(make_plan, target):
    report = plan_preflight(plan=make_plan())

    status, message = checks(report)[("local", "open_files")]
    assert status == "warning"
    assert message.startswith("no benchmarks worker has reported its open-file limit")


def test_prepared_statements_beyond_the_servers_limit_are_foreseen(
    make_plan, mariadb_server, target
):
    plan = make_plan(test="oltp_read_write", threads=[2], options={"time": 1, "tables": 4})
    with server_variable(mariadb_server, "max_prepared_stmt_count", "60"):
        report = plan_preflight(plan=plan)

    assert report.ok  # a warning: the runs would fail, but the user may know better
    assert checks(report)[("private-mariadb", "prepared_statements")] == (
        "warning",
        "oltp_read_write at threads=2 prepares up to 76 statements but "
        "max_prepared_stmt_count is 60: the runs would fail with error 1461; set "
        "max_prepared_stmt_count=76 or more in the plan's server settings (applied before the "
        "runs, put back after the batch), or use --db-ps-mode=disable, fewer threads or "
        "fewer tables",
    )


def test_a_plans_max_prepared_stmt_count_is_what_preflight_counts(make_plan, target):
    plan = make_plan(
        test="oltp_read_write",
        threads=[2],
        options={"time": 1, "tables": 4},
        server_settings={"max_prepared_stmt_count": ["76"]},
    )

    report = plan_preflight(plan=plan)

    assert checks(report)[("private-mariadb", "prepared_statements")] == (
        "ok",
        "oltp_read_write at threads=2 prepares up to 76 statements; "
        "max_prepared_stmt_count=76 holds them",
    )


def test_threads_above_max_connections_say_the_plan_may_set_it(make_plan, ssh_host, mariadb_server):
    plan = make_plan(load_host=ssh_host, threads=[mariadb_server.max_connections])

    message = failed(plan_preflight(plan=plan))[("private-mariadb", "max_connections")]

    assert message.endswith(
        f"the plan itself may set it (server settings: max_connections="
        f"{mariadb_server.max_connections + 1} or more, applied before the runs and put back "
        "after the batch)"
    )
