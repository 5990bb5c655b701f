"""A target restarted as a service: a restart command the operator allowed (the test
settings' `test-service`, an argv run without a shell, its placeholder the server's
folder) and the one include benchdash owns, inside the operator's include folder, on a
private mariadbd whose "service manager" is a script of the test. The include holds the
config of each restart, exactly what it held before is put back at the end, and no other
config file is touched."""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.models import Status, Target
from runs.services import batches
from tests.execution.test_restarts import make_plan, stop_what_runs
from tests.helpers import global_variable, wait_for_batch
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

# The test's service manager: stops the server of the pid file (a zombie counts as gone:
# the test process started the first one), starts it again with its config, detached, its
# standard error in a file as a service manager's journal would keep it; then, as
# systemctl does, returns once the server listens, or fails when it stopped.
RESTART_SCRIPT = """#!/bin/sh
pid=$(cat "{dir}/mariadb.pid" 2>/dev/null)
if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
  while [ -e "/proc/$pid" ] && ! grep -q zombie "/proc/$pid/status" 2>/dev/null; do
    sleep 0.2
  done
fi
setsid /usr/sbin/mariadbd --defaults-file="{dir}/service.cnf" </dev/null >>"{dir}/stderr.log" 2>&1 &
server=$!
for i in $(seq 300); do
  [ -S "{socket}" ] && exit 0
  if [ ! -e "/proc/$server" ] || grep -q zombie "/proc/$server/status" 2>/dev/null; then
    echo "Job for mariadb.service failed because the control process exited with error code."
    exit 1
  fi
  sleep 0.2
done
exit 1
"""


def service_instance(server: PrivateMariaDB) -> Iterator[PrivateMariaDB]:
    """`server` started, then restarted by its "service manager" only: a config of its
    own with a folder of includes, and the script that restarts it."""
    try:
        server.start()
        server.create_database("sbtest")
        (server.dir / "conf.d").mkdir()
        addresses = ",".join(filter(None, ["127.0.0.1", server.also_on]))
        (server.dir / "service.cnf").write_text(
            "[mysqld]\n"
            f"user = {pwd.getpwuid(os.getuid()).pw_name}\n"  # as the fixture runs it
            f"datadir = {server.datadir}\n"
            f"port = {server.port}\n"
            f"bind-address = {addresses}\n"
            f"socket = {server.socket}\n"
            f"pid-file = {server.dir / 'mariadb.pid'}\n"
            f"log-error = {server.error_log}\n"
            "max-connections = 20\n"
            "skip-name-resolve\n"
            "log-bin = binlog\n"
            "server-id = 1\n"
            f"!includedir {server.dir / 'conf.d'}\n"
        )
        script = server.dir / "restart-mariadb"
        script.write_text(RESTART_SCRIPT.format(dir=server.dir, socket=server.socket))
        script.chmod(0o755)
        yield server
    finally:
        stop_what_runs(server)
        server.stop()


@pytest.fixture
def service() -> Iterator[PrivateMariaDB]:
    yield from service_instance(PrivateMariaDB())


def service_target(server: PrivateMariaDB, include: Path, **config: object) -> Target:
    return Target.objects.create(
        name=f"service-{server.port}", engine="mariadb", host=server.host,
        port=server.port, database="sbtest", user=server.user, password=server.password,
        restart_mode="service",
        restart_config={"command": "test-service", "values": {"server": server.dir.name},
                        "include": str(include), "timeout_s": 60, **config},
    )  # fmt: skip


def test_a_service_is_restarted_through_its_include_and_its_command_then_put_back(
    celery_worker, local_host, service
):
    include = service.dir / "conf.d" / "99-benchdash.cnf"
    owners_line = "# the owner's own line, kept as it is\n"
    include.write_text(owners_line)
    service_cnf = (service.dir / "service.cnf").read_text()
    original = global_variable(service, "innodb_log_buffer_size")
    target = service_target(service, include)
    plan = make_plan(
        target,
        local_host,
        servers={
            "configs": [
                {"label": "logbuf8", "text": "[mysqld]\ninnodb_log_buffer_size = 8M"},
                {"label": "logbuf32", "text": "innodb_log_buffer_size = 32M"},
            ],
            "after_restart": "cold",
        },
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    runs = {run.config: run for run in batch.runs.all()}
    assert set(runs) == {"logbuf8", "logbuf32"}
    for run in runs.values():
        assert run.status == Status.DONE, run.error
        assert run.environment["restart"]["config"] == run.config
        assert run.environment["restart"]["version"].startswith("10.11")
    stages = [s for s in batch.stages if s["kind"] in ("restart", "restore")]
    assert [s["kind"] for s in stages] == ["restart", "restart", "restore"], batch.stages
    assert all(s["ok"] for s in stages), stages
    # Each restart read its config back: a value the server did not show fails the cell.
    assert include.read_text() == owners_line  # exactly what it held before
    assert (service.dir / "service.cnf").read_text() == service_cnf  # never touched
    assert global_variable(service, "innodb_log_buffer_size") == original
    assert batch.put_back[str(target.pk)]["original"]["include"] == owners_line
    assert batch.put_back[str(target.pk)]["running"] is None


REFUSED = {"label": "bogus", "text": "innodb_flush_method = bogus"}


def assert_refused_and_rolled_back(batch, server: PrivateMariaDB, include: Path, before) -> None:
    """The refused config's cell failed with the server's own line from its log (not the
    restart command's words), the original back in the include and running."""
    original_include, original_method = before
    runs = {run.config: run for run in batch.runs.all()}
    bogus = runs["bogus"]
    assert bogus.status == Status.FAILED and bogus.error_kind == "restart", batch.error
    # mariadbd's own line: "[ERROR] /usr/sbin/mariadbd: Error while setting value 'bogus'
    # to 'innodb-flush-method'"
    server_line = bogus.error.split("[ERROR]")[1]
    assert "'bogus'" in server_line and "innodb-flush-method" in server_line, bogus.error
    assert "Job for mariadb.service failed" not in bogus.error
    assert "rolled back" in bogus.error
    assert runs["logbuf32"].status == Status.DONE, runs["logbuf32"].error
    failed = [s for s in batch.stages if s["kind"] == "restart" and not s["ok"]]
    assert len(failed) == 1 and "'bogus'" in failed[0]["error"], batch.stages
    restores = [s for s in batch.stages if s["kind"] == "restore"]
    assert restores and all(s["ok"] for s in restores), restores
    assert (include.read_text() if include.exists() else None) == original_include
    assert global_variable(server, "innodb_flush_method") == original_method


@pytest.mark.parametrize("said_by", ["the server", "the restart config"])
def test_a_service_that_refuses_a_config_fails_its_cell_with_its_own_error_line(
    celery_worker, local_host, service, said_by
):
    include = service.dir / "conf.d" / "99-benchdash.cnf"  # none there before
    config: dict[str, object] = {}
    if said_by == "the restart config":
        # A server whose errors go to its standard error, kept by its service manager in
        # a file the server cannot name (@@log_error says nothing): the config names it.
        cnf = service.dir / "service.cnf"
        cnf.write_text(cnf.read_text().replace(f"log-error = {service.error_log}\n", ""))
        config = {"log": str(service.dir / "stderr.log")}
    before = (None, global_variable(service, "innodb_flush_method"))
    plan = make_plan(
        service_target(service, include, **config),
        local_host,
        servers={
            "configs": [REFUSED, {"label": "logbuf32", "text": "innodb_log_buffer_size = 32M"}],
            "after_restart": "cold",
        },
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert_refused_and_rolled_back(batch, service, include, before)
    state = batch.put_back[str(plan.target_id)]
    expected_log = config.get("log", str(service.error_log))
    assert state["error_log"] == expected_log and state["running"] is None
