"""Restart-only settings and config snippets as axes on a managed mariadbd of the test's
own: restarted before the cells that need it, every setting read back, the original put
back and restarted once more at the end; a config the server refuses is rolled back and
its cell fails with the server's own line; a target that did not opt in is refused."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.errors import InvalidInput
from runs.execution.restarts.processes import server_launch
from runs.execution.restarts.spec import Install, Options
from runs.loadhosts import server_shell
from runs.models import LoadHost, Plan, Status, Target
from runs.services import batches, plans
from tests.helpers import global_variable, wait_for_batch, wait_until
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

RUN = {"time": 2, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 20}
METHOD = "innodb_flush_method"


def stop_what_runs(server: PrivateMariaDB) -> None:
    """Whatever mariadbd runs on the test's data directory now (benchdash started it)."""
    for pid_file in [*server.datadir.glob("*.pid"), server.dir / "mariadb.pid"]:
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError, IndexError):
            continue
        deadline = time.monotonic() + 60
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            if "Z" in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[:1]:
                break
            time.sleep(0.2)


def managed_start(server: PrivateMariaDB) -> PrivateMariaDB:
    """`server` started with a database for the benchmark and the instance's own config,
    as its owner would write it: the socket of its own (never the default one of the
    machine's MariaDB), its addresses, binary log as the fixture's."""
    server.start()
    server.create_database("sbtest")
    addresses = ",".join(filter(None, ["127.0.0.1", server.also_on]))
    (server.dir / "my.cnf").write_text(
        "[mysqld]\n"
        f"socket = {server.socket}\n"
        f"bind-address = {addresses}\n"
        "max-connections = 20\n"
        "skip-name-resolve\n"
        "log-bin = binlog\n"
        "server-id = 1\n"
        "innodb-buffer-pool-size = 32M\n"
    )
    return server


def started_from_its_config(server: PrivateMariaDB) -> None:
    """The instance started again as its owner would start it day to day: from its own
    config (my.cnf), as a restart starts an install; the put-back starts it so again."""
    stop_what_runs(server)
    install = Install("10.11", "/usr", str(server.datadir), str(server.dir / "my.cnf"))
    server_launch(server_shell(None), "mariadb", install, port=server.port,
                  socket=server.socket, options=Options())  # fmt: skip
    wait_until(lambda: _answers(server), timeout=60, what="the instance from its config")


def _answers(server: PrivateMariaDB) -> bool:
    try:
        global_variable(server, "version")
    except Exception:
        return False
    return True


def managed_stop(server: PrivateMariaDB) -> None:
    stop_what_runs(server)
    server.stop()


def managed_instance(server: PrivateMariaDB) -> Iterator[PrivateMariaDB]:
    try:
        yield managed_start(server)
    finally:
        managed_stop(server)


@pytest.fixture
def managed() -> Iterator[PrivateMariaDB]:
    yield from managed_instance(PrivateMariaDB())


def managed_target(server: PrivateMariaDB, **fields: object) -> Target:
    values: dict[str, object] = {
        "name": f"managed-{server.port}",
        "engine": "mariadb",
        "host": server.host,
        "port": server.port,
        "database": "sbtest",
        "user": server.user,
        "password": server.password,
        "restart_mode": "managed",
        "restart_config": {
            "installs": [
                {
                    "label": "10.11",
                    "basedir": "/usr",
                    "datadir": str(server.datadir),
                    "config": str(server.dir / "my.cnf"),
                }
            ],
            "timeout_s": 60,
        },
    }
    values.update(fields)
    return Target.objects.create(**values)


def make_plan(target: Target, host: LoadHost, **fields: object) -> Plan:
    values: dict[str, object] = {
        "name": f"restarts {target.port}",
        "target": target,
        "load_host": host,
        "test": "oltp_read_only",
        "options": RUN,
        "threads": [1],
        "order_policy": "interleaved",
    }
    values.update(fields)
    return Plan.objects.create(**values)


def test_a_restart_only_setting_is_an_axis_restarted_verified_and_put_back(
    celery_worker, local_host, managed
):
    original = global_variable(managed, METHOD)
    plan = make_plan(
        managed_target(managed),
        local_host,
        server_settings={METHOD: ["fsync", "O_DIRECT"], "innodb_flush_log_at_trx_commit": ["2"]},
        servers={"after_restart": "warm", "warm_s": 2},
    )
    check = plans.plan_check(plan=plan, contact_server=False)
    assert check.cells[0].restart_key  # the setting is a restart's, not SET GLOBAL's
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    for run in batch.runs.order_by("position"):
        assert run.verified_settings[METHOD] == run.settings[METHOD]
        assert run.verified_settings["innodb_flush_log_at_trx_commit"] == "2"
        assert run.environment["restart"]["settings"] == {METHOD: run.settings[METHOD]}
        assert run.environment["restart"]["after_restart"] == "warm"
        assert run.environment["restart"]["version"].startswith("10.11")
    kinds = [s["kind"] for s in batch.stages]
    assert kinds.count("restart") == 2 and kinds[-1] == "restore", kinds
    assert "warmup" in kinds  # the cell's own load before the first measured cell
    assert all(s["ok"] and s["finished_at"] >= s["started_at"] for s in batch.stages)
    assert global_variable(managed, METHOD) == original  # the original config runs again
    assert batch.put_back[str(plan.target_id)]["running"] is None


def test_a_config_the_server_refuses_is_rolled_back_and_its_cell_fails_with_its_line(
    celery_worker, local_host, managed
):
    original = global_variable(managed, METHOD)
    plan = make_plan(
        managed_target(managed),
        local_host,
        servers={
            "configs": [
                {"label": "bogus", "text": "[mysqld]\ninnodb_flush_method = bogus"},
                {"label": "fsync", "text": "innodb_flush_method = fsync"},
            ],
            "after_restart": "cold",
        },
        repeats=1,
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    runs = {run.config: run for run in batch.runs.all()}
    assert runs["bogus"].status == Status.FAILED
    assert runs["bogus"].error_kind == "restart"
    # mariadbd's own line: "[ERROR] .../mariadbd: Error while setting value 'bogus' to
    # 'innodb-flush-method'"
    server_line = runs["bogus"].error.split("[ERROR]")[1]
    assert "'bogus'" in server_line and "innodb-flush-method" in server_line
    assert "rolled back" in runs["bogus"].error
    assert runs["fsync"].status == Status.DONE
    assert runs["fsync"].environment["restart"]["after_restart"] in ("cold", "warm")
    failed = [s for s in batch.stages if s["kind"] == "restart" and not s["ok"]]
    assert failed and "bogus" in failed[0]["error"], failed
    assert global_variable(managed, METHOD) == original


@pytest.mark.django_db
def test_a_target_that_did_not_opt_in_is_refused_by_name(local_host, mariadb_server):
    target = managed_target(mariadb_server, restart_mode="", restart_config={}, name="never")
    plan = make_plan(target, local_host, server_settings={METHOD: ["O_DIRECT"]})
    with pytest.raises(InvalidInput, match="innodb_flush_method needs a server restart"):
        plans.plan_check(plan=plan, contact_server=False)
    plan.server_settings = {}
    plan.servers = {"configs": [{"label": "a", "text": "innodb_flush_method = fsync"}]}
    with pytest.raises(InvalidInput, match="never restarts"):
        plans.plan_check(plan=plan, contact_server=False)
