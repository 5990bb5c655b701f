"""Batches on an SSH load host, end to end: a real worker, real sysbench behind a real
sshd, a real MariaDB. The load host is inspected with the OpenSSH client."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from runs.errors import InvalidInput
from runs.models import Batch, Run, Sample, Status
from runs.services import batches, recovery
from runs.services.scripts import luascripts
from tests.helpers import global_variable, printed_transactions, wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

ALL_CMDLINES = "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' <\"$f\"; echo; done"


def remote_comm(sshd_server, key_file, pid: int | None) -> str:
    """The name of process `pid` on the load host, "" when there is none (or a zombie:
    dead, waiting for its parent to read its exit status)."""
    script = (
        f"stat=$(cat /proc/{pid}/stat 2>/dev/null) || exit 0; "
        f"case $stat in *') Z '*) ;; *) cat /proc/{pid}/comm ;; esac"
    )
    return sshd_server.ssh(key_file, script).strip()


def key_body(private_key: str) -> list[str]:
    """The lines of a private key that are secret: all but the BEGIN and END lines."""
    return [line for line in private_key.splitlines() if line and "PRIVATE KEY" not in line]


def test_the_matrix_runs_through_ssh_and_restores_the_server(
    celery_worker, make_plan, ssh_host, make_ssh_host, target, mariadb_server
):
    target.server_host = make_ssh_host("db-host")  # the database server's own SSH host
    target.cpu_cores = 8  # given by a user; the disks are not
    target.save()
    original_flush = global_variable(mariadb_server, "innodb_flush_log_at_trx_commit")
    plan = make_plan(
        load_host=ssh_host,
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 100},
        threads=[1, 2],
        server_settings={"innodb_flush_log_at_trx_commit": ["1", "2"]},
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("status", "error")))
    runs = list(batch.runs.order_by("position"))
    assert len(runs) == 4
    for run in runs:
        assert run.status == Status.DONE, run.error
        assert run.samples.count() >= 1
        assert run.summary["transactions"] == printed_transactions(run.raw_log)
        assert run.verified_settings == run.settings
        assert run.argv[:2] == ["sysbench", "--config-file=./sysbench.cfg"]
        assert mariadb_server.password not in " ".join(run.argv)
        assert run.pgid
    assert global_variable(mariadb_server, "innodb_flush_log_at_trx_commit") == original_flush
    environment = batch.environment
    assert environment["preflight"]["ok"] is True
    assert environment["load_host"]["host"] == "loadhost-1"
    assert environment["load_host"]["sysbench_version"] == "sysbench 1.0.20"
    assert environment["server"]["variables"]["log_bin"] == "ON"
    server_host = environment["server_host"]
    assert server_host["host"] == "db-host" and server_host["cpu_cores"] >= 1
    disks = len(server_host["disks"]) or None  # a container may show no block device
    assert environment["reference"] == {
        "cpu_cores": 8,
        "disk_count": disks,
        "threads": 8 * 2 + disks if disks else None,
        "from_server_host": ["disk_count"] if disks else [],
    }


def test_a_failed_preflight_fails_the_batch_and_skips_every_run(
    celery_worker, make_plan, make_ssh_host, mariadb_server
):
    host = make_ssh_host("loadhost-low", command='ulimit -n 20; exec sh -c "$SSH_ORIGINAL_COMMAND"')
    original_flush = global_variable(mariadb_server, "innodb_flush_log_at_trx_commit")
    plan = make_plan(
        load_host=host, threads=[2, 12], server_settings={"innodb_flush_log_at_trx_commit": ["2"]}
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert batch.status == Status.FAILED
    assert batch.error.startswith("preflight failed: open_files on loadhost-low: threads=12 needs")
    assert "the hard limit on loadhost-low is 20" in batch.error
    assert set(batch.runs.values_list("status", flat=True)) == {Status.SKIPPED}
    assert batch.environment["preflight"]["ok"] is False
    assert global_variable(mariadb_server, "innodb_flush_log_at_trx_commit") == original_flush


def test_no_secret_shows_on_the_load_host_or_in_the_worker_log(
    celery_worker, make_plan, ssh_host, ssh_key, ssh_key_file, sshd_server, target, caplog
):
    caplog.set_level(logging.DEBUG)
    plan = make_plan(
        load_host=ssh_host,
        test="oltp_read_only",
        options={"time": 4, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
    )
    batch = batches.batch_launch(plan=plan)
    wait_until(
        lambda: Sample.objects.filter(run__batch=batch, run__status=Status.RUNNING).exists(),
        timeout=90,
        what="a sample of a running run",
    )

    cmdlines = sshd_server.ssh(ssh_key_file, ALL_CMDLINES)
    batch = wait_for_batch(batch)

    assert batch.status == Status.DONE, batch.error
    assert "--config-file=./sysbench.cfg oltp_read_only" in cmdlines, "read during the run"
    secrets = [target.password, *key_body(ssh_key.private)]
    for secret in secrets:
        assert secret not in cmdlines
        assert secret not in caplog.text
    # The API and pages are built elsewhere; they are not checked here.


def test_a_worker_killed_mid_run_over_ssh_leaves_no_sysbench_and_the_batch_finishes(
    worker_process, make_plan, ssh_host, ssh_key, ssh_key_file, sshd_server, target, tmp_path
):
    plan = make_plan(
        load_host=ssh_host,
        test="oltp_read_only",
        options={"time": 15, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
        server_settings={"innodb_flush_log_at_trx_commit": ["0", "2"]},
        order_policy="ramp",
    )
    first = worker_process()
    batch = batches.batch_launch(plan=plan)
    wait_until(
        lambda: Sample.objects.filter(run__batch=batch, run__position=0).count() >= 2,
        timeout=90,
        what="two samples of the first run",
    )
    killed = Run.objects.get(batch=batch, position=0)
    workdir = sshd_server.ssh(ssh_key_file, f"readlink /proc/{killed.pgid}/cwd").strip()

    first.kill()
    time.sleep(6)  # the heartbeat goes stale (5 s in the test settings)
    worker_process()  # its start-up sweep recovers the batch
    batch = wait_for_batch(batch, timeout=120)

    killed.refresh_from_db()
    assert killed.status == Status.INTERRUPTED
    assert remote_comm(sshd_server, ssh_key_file, killed.pgid) != "sysbench"
    assert sshd_server.ssh(ssh_key_file, f"test -e {workdir} || echo gone") == "gone\n"
    assert [r.status for r in batch.runs.filter(position__gt=0)] == [Status.DONE]
    assert batch.status == Status.DONE, batch.error
    log = (tmp_path / "worker.log").read_text()
    for secret in [target.password, *key_body(ssh_key.private)]:
        assert secret not in log


def test_the_sweeper_kills_a_remote_sysbench_that_outlived_its_worker(
    transactional_db, ssh_host, ssh_key_file, sshd_server
):
    # A sysbench that prints nothing does not notice that its SSH connection is gone.
    pgid = int(
        sshd_server.ssh(
            ssh_key_file,
            "setsid sysbench cpu --time=120 run </dev/null >/dev/null 2>&1 & echo $!",
        )
    )
    wait_until(lambda: remote_comm(sshd_server, ssh_key_file, pgid) == "sysbench", 10, "sysbench")
    long_ago = timezone.now() - timedelta(minutes=5)
    batch = Batch.objects.create(
        load_host=ssh_host,
        params={"test": "cpu", "server_settings": {}},
        seed=0,
        launched_by="api",
        status=Status.RUNNING,
        worker="benchdash@another-machine",
        heartbeat_at=long_ago,
    )
    Run.objects.create(
        batch=batch, position=0, round=0, cell_key="cpu", threads=1, status=Status.RUNNING,
        pgid=pgid, heartbeat_at=long_ago,
    )  # fmt: skip

    assert recovery.batches_sweep_stale(hostname="this-machine") == [batch.pk]

    assert remote_comm(sshd_server, ssh_key_file, pgid) == ""
    assert batch.runs.get().status == Status.INTERRUPTED


# --- custom Lua scripts ----------------------------------------------------------------------

POINT_SELECTS_LUA = """\
-- The point selects of oltp_point_select, on oltp_common's tables
require("oltp_common")

function prepare_statements()
  prepare_point_selects()
end

function event()
  execute_point_selects()
end
"""


@pytest.fixture
def script_author(transactional_db, django_user_model):
    user = django_user_model.objects.create_user("author")
    user.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    return django_user_model.objects.get(pk=user.pk)  # a fresh permission cache


def test_a_lua_script_runs_on_an_ssh_host(celery_worker, make_plan, ssh_host, script_author):
    script = luascripts.luascript_upload(
        user=script_author, name="point selects", content=POINT_SELECTS_LUA
    )
    plan = make_plan(load_host=ssh_host, test="oltp_point_select", script=script)

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    run = batch.runs.get()
    assert run.argv[2] == "./script.lua"
    assert run.summary["transactions"] == printed_transactions(run.raw_log) > 0
    frozen = batch.params["script"]
    assert (frozen["name"], frozen["content"], frozen["version"]) == (
        "point selects",
        POINT_SELECTS_LUA,
        1,
    )
    # Its options were those of oltp_common, which it requires: the plan's are checked.
    assert "table_size" in {o["name"] for o in frozen["interface"]["options"]}
    assert [s["kind"] for s in batch.stages] == ["prepare", "cleanup"]


def test_a_lua_script_is_refused_on_the_local_host_where_that_is_off(
    make_plan, script_author, settings
):
    settings.BENCHDASH_LOCAL_SCRIPTS = False
    script = luascripts.luascript_upload(user=script_author, name="s", content="-- nothing\n")
    plan = make_plan(script=script)

    with pytest.raises(InvalidInput) as refused:
        batches.batch_launch(plan=plan)

    assert refused.value.field == "load_host"
    assert not plan.batches.exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("mysql-storage-engine", "innodb; touch pwned"),
        ("tables", "$(id)"),
        ("rand-type", "uniform\ntouch pwned"),
        ("forced-shutdown", "`id`"),
    ],
)
def test_shell_metacharacters_in_a_plan_are_refused_before_any_ssh(
    make_plan, ssh_host, option, value
):
    options: dict[str, object] = {"time": 2, "tables": 1, "table-size": 100}
    options[option] = value
    plan = make_plan(load_host=ssh_host, options=options)

    with pytest.raises(InvalidInput) as refused:
        batches.batch_launch(plan=plan)

    assert refused.value.field == option
    assert not plan.batches.exists()


def test_cancel_over_ssh_stops_the_remote_sysbench_and_keeps_the_samples(
    celery_worker, make_plan, ssh_host, ssh_key_file, sshd_server
):
    plan = make_plan(
        load_host=ssh_host,
        test="oltp_read_only",
        options={"time": 20, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
        repeats=2,
    )
    batch = batches.batch_launch(plan=plan)
    wait_until(
        lambda: Sample.objects.filter(run__batch=batch, run__position=0).count() >= 2,
        timeout=90,
        what="two samples of the first run",
    )

    batches.batch_cancel(batch=batch)

    batch = wait_for_batch(batch, timeout=60)
    cancelled = Run.objects.get(batch=batch, position=0)
    assert batch.status == Status.CANCELLED
    assert cancelled.status == Status.CANCELLED
    assert cancelled.samples.count() >= 2
    assert remote_comm(sshd_server, ssh_key_file, cancelled.pgid) != "sysbench"
    assert batch.runs.get(position=1).status == Status.SKIPPED
