"""A target restarted as a service: a restart command (an argv list, run without a shell)
and the one include benchdash owns, on a private mariadbd whose "service manager" is a
script of the test. The include holds the config of each restart, exactly what it held
before is put back at the end, and no other config file is touched."""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator

import pytest

from runs.models import Status, Target
from runs.services import batches
from tests.execution.test_restarts import make_plan, stop_what_runs
from tests.helpers import global_variable, wait_for_batch
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

# The test's service manager: stops the server of the pid file (a zombie counts as gone:
# the test process started the first one), starts it again with its config, detached.
RESTART_SCRIPT = """#!/bin/sh
pid=$(cat "{dir}/mariadb.pid" 2>/dev/null)
if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
  while [ -e "/proc/$pid" ] && ! grep -q zombie "/proc/$pid/status" 2>/dev/null; do
    sleep 0.2
  done
fi
setsid /usr/sbin/mariadbd --defaults-file="{dir}/service.cnf" </dev/null >/dev/null 2>&1 &
"""


@pytest.fixture
def service() -> Iterator[PrivateMariaDB]:
    server = PrivateMariaDB()
    try:
        server.start()
        server.create_database("sbtest")
        (server.dir / "conf.d").mkdir()
        (server.dir / "service.cnf").write_text(
            "[mysqld]\n"
            f"user = {pwd.getpwuid(os.getuid()).pw_name}\n"  # as the fixture runs it
            f"datadir = {server.datadir}\n"
            f"port = {server.port}\n"
            "bind-address = 127.0.0.1\n"
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
        script.write_text(RESTART_SCRIPT.format(dir=server.dir))
        script.chmod(0o755)
        yield server
    finally:
        stop_what_runs(server)
        server.stop()


def test_a_service_is_restarted_through_its_include_and_its_command_then_put_back(
    celery_worker, local_host, service
):
    include = service.dir / "conf.d" / "99-benchdash.cnf"
    owners_line = "# the owner's own line, kept as it is\n"
    include.write_text(owners_line)
    service_cnf = (service.dir / "service.cnf").read_text()
    original = global_variable(service, "innodb_log_buffer_size")
    target = Target.objects.create(
        name=f"service-{service.port}", engine="mariadb", host=service.host,
        port=service.port, database="sbtest", user=service.user, password=service.password,
        restart_mode="service",
        restart_config={"command": ["/bin/sh", str(service.dir / "restart-mariadb")],
                        "include": str(include), "timeout_s": 60},
    )  # fmt: skip
    plan = make_plan(
        target,
        local_host,
        server_axes={
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
    assert batch.servers[str(target.pk)]["original"]["include"] == owners_line
    assert batch.servers[str(target.pk)]["running"] is None
