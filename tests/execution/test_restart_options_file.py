"""A managed instance's restart options reach it in a file only its owner reads, never on
its command line (which every account of the machine reads in ps): a private mariadbd and
a private PostgreSQL started by the restart path (processes.server_launch) with a config
snippet's options, each option taken, the install's own config still read, the process's
command line without them, the file 0600 and its server's; the original started again
without the file; the install's own credential (report_password) hidden in the variables
a batch keeps. And a batch with a snippet puts the original back and leaves no file."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runs import targets
from runs.credentials import HIDDEN
from runs.execution.restarts.processes import server_launch, server_stop
from runs.execution.restarts.spec import Install, Options, restart_options
from runs.loadhosts import server_shell
from runs.models import Status, Target
from runs.services import batches
from tests.execution.test_restarts import make_plan, managed_instance, managed_target
from tests.execution.test_restarts_postgres import own_instance, show
from tests.helpers import global_variable, wait_for_batch
from tests.servers import PrivateMariaDB, PrivatePostgres

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

REPORT_PASSWORD = "Repl1ca-report-pw"
SNIPPET = "[mysqld]\n# a comment\ninnodb_flush_method = fsync\nkey_buffer_size = 9M\n"


@pytest.fixture
def managed() -> Iterator[PrivateMariaDB]:
    yield from managed_instance(PrivateMariaDB())


@pytest.fixture
def managed_pg() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        server.start()
        yield own_instance(server)
    finally:
        server.stop()


def answer(read: Callable[[], str], timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return read()
        except Exception:
            assert time.monotonic() < deadline, "the server did not answer"
            time.sleep(0.2)


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_a_managed_mariadbs_options_are_in_a_file_only_its_owner_reads(managed):
    shell = server_shell(None)
    install = Install("10.11", "/usr", str(managed.datadir), str(managed.dir / "my.cnf"))
    options = restart_options(
        "mariadb", config_text=SNIPPET, settings={"innodb_log_buffer_size": "32M"}
    )
    assert global_variable(managed, "innodb_flush_method") == "O_DIRECT"  # 10.11's default
    managed.stop_server()  # the original, as a restart stops it
    with (managed.dir / "my.cnf").open("a") as config:  # the owner's own credential
        config.write(f"report_password = {REPORT_PASSWORD}\n")

    pid, _ = server_launch(shell, "mariadb", install, port=managed.port,
                           socket=managed.socket, options=options)  # fmt: skip
    try:
        assert answer(lambda: global_variable(managed, "innodb_flush_method")) == "fsync"
        assert global_variable(managed, "key_buffer_size") == str(9 * 1024 * 1024)
        assert global_variable(managed, "innodb_log_buffer_size") == str(32 * 1024 * 1024)
        # the install's own config read too: its max-connections, its binary log
        assert global_variable(managed, "max_connections") == "20"
        assert global_variable(managed, "log_bin") == "1"

        argv = command_line(pid)
        written = managed.datadir / "benchdash-options.cnf"
        assert argv[1] == f"--defaults-file={written}"
        for word in ("fsync", "9M", "32M", "innodb_flush_method", "key_buffer", "my.cnf"):
            assert not any(word in arg for arg in argv), (word, argv)
        stat = written.stat()
        assert stat.st_mode & 0o777 == 0o600
        # its owner: the data directory's, who runs the server
        assert stat.st_uid == managed.datadir.stat().st_uid == os.stat(f"/proc/{pid}").st_uid
        # The install's credential is the server's, never what a batch keeps of it.
        assert global_variable(managed, "report_password") == REPORT_PASSWORD
        target = Target(
            engine="mariadb",
            host=managed.host,
            port=managed.port,
            database="sbtest",
            user=managed.user,
            password=managed.password,
        )
        with targets.connect(targets.connection_of(target)) as db:
            info = db.server_info()
        assert info.variables["report_password"] == HIDDEN
        assert REPORT_PASSWORD not in repr(info)
    finally:
        server_stop(shell, pid, "mariadb", 60)

    # The original put back: started as before, the file removed.
    pid, _ = server_launch(shell, "mariadb", install, port=managed.port,
                           socket=managed.socket, options=Options())  # fmt: skip
    assert answer(lambda: global_variable(managed, "innodb_flush_method")) == "O_DIRECT"
    assert command_line(pid)[1] == f"--defaults-file={managed.dir / 'my.cnf'}"
    assert not written.exists()
    assert not [p.name for p in managed.datadir.iterdir() if "benchdash-options" in p.name]


def test_a_managed_postgresqls_options_are_in_a_file_only_its_owner_reads(managed_pg):
    shell = server_shell(None)
    install = Install("15", str(managed_pg.basedir), str(managed_pg.datadir))
    options = restart_options(
        "postgresql", config_text="shared_buffers = '16MB'", settings={"wal_buffers": "1MB"}
    )
    managed_pg.stop_server()

    pid, _ = server_launch(shell, "postgresql", install, port=managed_pg.port, socket="",
                           options=options)  # fmt: skip
    try:
        assert answer(lambda: show(managed_pg, "shared_buffers")) == "16MB"
        assert show(managed_pg, "wal_buffers") == "1MB"
        # the data directory's postgresql.conf still read: its own socket folder
        assert show(managed_pg, "unix_socket_directories") == str(managed_pg.dir)

        argv = command_line(pid)
        written = managed_pg.datadir / "benchdash-options.conf"
        assert f"config_file={written}" in argv
        for word in ("16MB", "1MB", "shared_buffers", "wal_buffers"):
            assert not any(word in arg for arg in argv), (word, argv)
        stat = written.stat()
        assert stat.st_mode & 0o777 == 0o600
        # the data directory's owner (postgres, when the tests run as root), who runs it
        assert stat.st_uid == managed_pg.datadir.stat().st_uid == os.stat(f"/proc/{pid}").st_uid
    finally:
        server_stop(shell, pid, "postgresql", 60)

    pid, _ = server_launch(shell, "postgresql", install, port=managed_pg.port, socket="",
                           options=Options())  # fmt: skip
    try:
        assert answer(lambda: show(managed_pg, "shared_buffers")) == "24MB"  # its own again
        assert not any("config_file" in arg for arg in command_line(pid))
        assert not written.exists()
    finally:
        server_stop(shell, pid, "postgresql", 60)


def test_a_batch_with_a_snippet_leaves_no_options_file_behind(celery_worker, local_host, managed):
    plan = make_plan(
        managed_target(managed),
        local_host,
        servers={"configs": [{"label": "fsync", "text": SNIPPET}], "after_restart": "cold"},
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    for run in batch.runs.all():
        assert run.environment["restart"]["config"] == "fsync"
    # Each option read back after the restart: one the server did not show fails the cell
    # and says so in its stage.
    restarts = [s for s in batch.stages if s["kind"] in ("restart", "restore")]
    assert [s["kind"] for s in restarts] == ["restart", "restore"], batch.stages
    assert all(s["ok"] and not s["error"] for s in restarts), restarts
    assert global_variable(managed, "innodb_flush_method") == "O_DIRECT"  # the original back
    assert not (managed.datadir / "benchdash-options.cnf").exists()
