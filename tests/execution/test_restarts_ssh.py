"""Restarts over the target's server host: the database server is on "another machine"
(127.0.0.2, a target benchdash does not take for the worker's own), reached through the
private sshd as its server host. Every command benchdash sends there is recorded by the
login's forced command, so the tests see that the restart went over SSH: a managed
mariadbd restarted with a restart-only value, verified and put back; a service whose
config value the server refuses, rolled back, its cell failed with the server's own line
from its log; preflight's rehearsal, which changes nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runs.models import LoadHost, Status, Target
from runs.services import batches
from runs.services.plans import plan_preflight
from tests.execution.test_restart_service import (
    REFUSED,
    assert_refused_and_rolled_back,
    service_instance,
    service_target,
)
from tests.execution.test_restarts import make_plan, managed_instance, managed_target
from tests.helpers import global_variable, wait_for_batch
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

ELSEWHERE = "127.0.0.2"  # loopback, yet not an address benchdash takes for its own machine
LOG_BUFFER = "innodb_log_buffer_size"


@pytest.fixture
def remote_managed() -> Iterator[PrivateMariaDB]:
    yield from managed_instance(PrivateMariaDB(also_on=ELSEWHERE))


@pytest.fixture
def remote_service() -> Iterator[PrivateMariaDB]:
    yield from service_instance(PrivateMariaDB(also_on=ELSEWHERE))


@pytest.fixture
def sent(tmp_path: Path) -> Path:
    """Each command the database server's SSH host was asked to run (SFTP included)."""
    log = tmp_path / "commands.log"
    log.touch()
    return log


@pytest.fixture
def db_host(make_ssh_host: Callable[..., LoadHost], sent: Path) -> LoadHost:
    """The database server's SSH host: each command recorded in `sent`, then run."""
    record = f'printf "%s\\n" "$SSH_ORIGINAL_COMMAND" >>{sent}'
    return make_ssh_host("db-host", command=f'{record}; exec sh -c "$SSH_ORIGINAL_COMMAND"')


def restart_check(report, name: str) -> tuple[str, str]:
    return {(c.host, c.check): (c.status, c.message) for c in report.checks}[(name, "restart")]


def elsewhere(target: Target, server_host: LoadHost | None) -> Target:
    target.host = ELSEWHERE
    target.server_host = server_host
    target.save()
    return target


def test_a_managed_server_on_its_server_host_is_restarted_verified_and_put_back_over_ssh(
    celery_worker, local_host, remote_managed, db_host, sent
):
    original = global_variable(remote_managed, LOG_BUFFER)
    target = elsewhere(managed_target(remote_managed), db_host)
    plan = make_plan(
        target,
        local_host,
        server_settings={LOG_BUFFER: ["8M", "32M"]},
        servers={"after_restart": "cold"},
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    for run in batch.runs.all():
        restart = run.environment["restart"]
        megabytes = int(run.settings[LOG_BUFFER].removesuffix("M"))
        assert run.verified_settings[LOG_BUFFER] == str(megabytes << 20)  # as the server says
        assert (
            restart["machine"] == f"server host db-host ({db_host.user}@127.0.0.1:{db_host.port})"
        )
        assert restart["binary"] == "/usr/sbin/mariadbd"
    stages = [(s["kind"], s["ok"]) for s in batch.stages if s["kind"] in ("restart", "restore")]
    assert stages == [("restart", True), ("restart", True), ("restore", True)], batch.stages
    assert global_variable(remote_managed, LOG_BUFFER) == original
    assert batch.put_back[str(target.pk)]["running"] is None
    # Every start went through the server host: the start script, with the binary as a
    # quoted word; the values never on its command line (every account there reads it in
    # ps): in the 0600 file written over SFTP, named by the two restarts, not the restore.
    commands = sent.read_text()
    assert commands.count('setsid "$@" </dev/null') == 3, commands
    assert "innodb_log_buffer_size" not in commands and "sftp-server" in commands
    options = remote_managed.datadir / "benchdash-options.cnf"
    assert commands.count(f"--defaults-file={options}") == 2, commands
    assert not options.exists()  # removed when the original was put back
    assert "kill -s" in commands  # stopped there too
    # The original put back as its owner started it: its own error log, a second start.
    assert remote_managed.error_log.read_text().count("ready for connections") >= 2


def test_a_service_on_its_server_host_that_refuses_a_config_fails_with_its_own_line(
    celery_worker, local_host, remote_service, db_host, sent
):
    include = remote_service.dir / "conf.d" / "99-benchdash.cnf"
    owners_line = "# the owner's own line, kept as it is\n"
    include.write_text(owners_line)
    before = (owners_line, global_variable(remote_service, "innodb_flush_method"))
    target = elsewhere(service_target(remote_service, include), db_host)
    plan = make_plan(
        target,
        local_host,
        servers={
            "configs": [REFUSED, {"label": "logbuf32", "text": "innodb_log_buffer_size = 32M"}],
            "after_restart": "cold",
        },
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert_refused_and_rolled_back(batch, remote_service, include, before)
    assert batch.put_back[str(target.pk)]["error_log"] == str(remote_service.error_log)
    commands = sent.read_text()
    assert f"/bin/sh {remote_service.dir}/restart-mariadb" in commands, commands
    assert "sftp-server" in commands  # the include written over SFTP
    assert not list(include.parent.glob(".*.benchdash"))  # no temporary file left


def test_preflight_rehearses_the_restart_path_on_the_server_host_changing_nothing(
    transactional_db, local_host, remote_managed, db_host, sent
):
    target = elsewhere(managed_target(remote_managed), None)
    plan = make_plan(target, local_host, server_settings={LOG_BUFFER: ["8M"]})

    # On another machine, and no way to reach it:
    status, message = restart_check(plan_preflight(plan=plan), target.name)
    assert status == "failed"
    assert f"runs on {ELSEWHERE}" in message and "give it a server host" in message

    elsewhere(target, db_host)
    status, message = restart_check(plan_preflight(plan=plan), target.name)
    assert status == "ok", message
    assert message.startswith("would restart it on server host db-host (")
    assert "(install 10.11 runs now)" in message

    missing = managed_target(remote_managed, name="no-binary")
    missing.restart_config["installs"][0]["basedir"] = "/opt/no-such-mariadb"
    elsewhere(missing, db_host)
    plan.target = missing
    plan.save()
    status, message = restart_check(plan_preflight(plan=plan), "no-binary")
    assert status == "failed"
    assert "no mariadbd in /opt/no-such-mariadb/bin or sbin on server host db-host" in message

    # A service there: its command and include checked there, and where its errors are.
    include = remote_managed.dir / "99-benchdash.cnf"
    service = elsewhere(service_target(remote_managed, include), db_host)
    plan.target = service
    plan.save()
    status, message = restart_check(plan_preflight(plan=plan), service.name)
    assert status == "ok", message
    assert f"write {include} and run /bin/sh" in message
    assert f"a failed start's error read from {remote_managed.error_log}" in message
    missing_folder = remote_managed.dir / "no-such-folder" / "99-benchdash.cnf"
    service.restart_config["include"] = str(missing_folder)
    service.save()
    status, message = restart_check(plan_preflight(plan=plan), service.name)
    assert status == "failed"
    assert f"{missing_folder} cannot be written on server host db-host" in message

    commands = sent.read_text()
    assert "for p do" in commands  # the binary looked for there
    assert "setsid" not in commands and "kill -s" not in commands  # nothing started or stopped
    assert not (remote_managed.datadir / "benchdash-server.log").exists()
