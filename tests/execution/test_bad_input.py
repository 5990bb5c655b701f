"""Bad input ends in a clear message, on the run or as a validation error naming the field,
and loses nothing already received."""

from __future__ import annotations

import pytest

from runs.errors import InvalidInput
from runs.models import Sample, Status, Target
from runs.services import batches
from runs.services import plans as checks
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def launch_and_wait(plan):
    return wait_for_batch(batches.batch_launch(plan=plan))


def test_a_wrong_password_fails_the_batch_with_the_servers_words(celery_worker, make_plan, target):
    target.password = "not-the-password"
    target.save()

    batch = launch_and_wait(make_plan())

    assert batch.status == Status.FAILED
    assert "1045" in batch.error and "Access denied" in batch.error
    assert "password" in batch.error  # the hint
    run = batch.runs.get()
    assert run.status == Status.SKIPPED
    assert "Access denied" in run.error


def test_an_unreachable_port_says_where(celery_worker, make_plan, target, free_port):
    target.port = free_port
    target.save()

    batch = launch_and_wait(make_plan())

    assert batch.status == Status.FAILED
    assert f"127.0.0.1:{free_port}" in batch.error
    assert "running" in batch.error  # hint: check that the server is running


def test_a_missing_table_fails_the_run_with_a_hint_to_prepare(celery_worker, make_plan):
    batch = launch_and_wait(make_plan(test="oltp_read_only", dataset_policy="existing"))

    run = batch.runs.get()
    assert run.status == Status.FAILED
    assert "1146" in run.error and "doesn't exist" in run.error
    assert "prepare" in run.error_hint
    assert "FATAL" in run.raw_log
    assert batch.status == Status.FAILED


def test_sysbench_missing_from_path_is_named(celery_worker, make_plan, settings):
    settings.BENCHDASH_SYSBENCH = "sysbench-not-installed"

    batch = launch_and_wait(make_plan())

    assert batch.status == Status.FAILED
    assert "sysbench is not installed on load host 'local'" in batch.error
    assert batch.runs.get().status == Status.SKIPPED


def test_an_error_mid_run_keeps_the_samples_already_received(
    celery_worker, make_plan, mariadb_server, target
):
    # A deadlock-free way to break a running benchmark: too many connections once the
    # second thread connects is not mid-run, so kill the connections mid-run instead.
    import threading
    import time

    plan = make_plan(
        test="oltp_read_only",
        options={"time": 8, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
    )
    batch = batches.batch_launch(plan=plan)

    def kill_sysbench_connections() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if Sample.objects.filter(run__batch=batch).count() >= 2:
                break
            time.sleep(0.2)
        db = mariadb_server.root_connect()
        cursor = db.cursor()
        cursor.execute(
            "SELECT id FROM information_schema.processlist WHERE user = %s AND db = %s",
            [target.user, target.database],
        )
        for (conn_id,) in cursor.fetchall():
            cursor.execute("KILL %s", [conn_id])
        db.close()

    killer = threading.Thread(target=kill_sysbench_connections)
    killer.start()
    batch = wait_for_batch(batch)
    killer.join()

    run = batch.runs.get()
    assert run.status == Status.FAILED
    assert run.error  # sysbench's words, e.g. "MySQL error: 2013 Lost connection ..."
    assert run.samples.count() >= 2


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"threads": [0]}, "threads"),
        ({"threads": [1, -2]}, "threads"),
        ({"options": {"no-such-option": 1}}, "no-such-option"),
        ({"server_settings": {"innodb_log_file_size": ["1000"]}}, "server_settings"),
        ({"server_settings": {"max_allowed_packet": ["1000"]}}, "server_settings"),
        ({"options": {"tables": "1; touch pwned"}}, "tables"),
    ],
)
def test_invalid_plans_are_refused_naming_the_field(make_plan, fields, field):
    plan = make_plan(**fields)

    with pytest.raises(InvalidInput) as refused:
        batches.batch_launch(plan=plan)

    assert refused.value.field == field
    assert not plan.batches.exists()


def test_a_variable_that_needs_a_restart_says_so(make_plan):
    plan = make_plan(server_settings={"innodb_log_file_size": ["1000"]})

    with pytest.raises(InvalidInput, match="needs a server restart"):
        checks.plan_check(plan=plan)


def test_threads_above_max_connections_are_refused(make_plan, mariadb_server):
    plan = make_plan(threads=[1, mariadb_server.max_connections])

    with pytest.raises(InvalidInput) as refused:
        batches.batch_launch(plan=plan)

    assert refused.value.field == "threads"
    assert f"max_connections is {mariadb_server.max_connections}" in refused.value.message


def test_a_max_connections_axis_counts_instead_of_the_servers_current_value(
    make_plan, mariadb_server
):
    threads = mariadb_server.max_connections  # one more connection than the server allows now
    plan = make_plan(threads=[1, threads], server_settings={"max_connections": [str(threads * 2)]})

    assert checks.plan_check(plan=plan).run_count == 2

    plan.server_settings = {"max_connections": ["10", str(threads * 2)]}
    with pytest.raises(InvalidInput) as refused:
        checks.plan_check(plan=plan)
    assert refused.value.field == "threads"
    assert "max_connections is 10 in the cells that set it so" in refused.value.message


def test_a_sync_binlog_axis_without_binary_logging_warns(
    transactional_db, local_host, mariadb_nobinlog_server
):
    from runs.models import Plan

    target = Target.objects.create(
        name="no-binlog",
        engine="mariadb",
        host="127.0.0.1",
        port=mariadb_nobinlog_server.port,
        database=mariadb_nobinlog_server.create_database("nobinlog"),
        user=mariadb_nobinlog_server.user,
        password=mariadb_nobinlog_server.password,
    )
    plan = Plan.objects.create(
        name="binlog off",
        target=target,
        load_host=local_host,
        test="oltp_insert",
        threads=[1],
        server_settings={"sync_binlog": ["0", "1"]},
    )

    check = checks.plan_check(plan=plan)

    assert check.warnings == ["sync_binlog has no effect: binary logging is off (log_bin=OFF)"]
