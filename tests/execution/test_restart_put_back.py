"""The put-back starts the server as it was found: its owner's own command line (a setting
given there only, not in its config, comes back), and every setting is read back against
the server as found, one by one; one that did not come back is said on the restore
stage. On a managed mariadbd of the test's own."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.execution.restarts.readback import came_back_unlike
from runs.models import Status
from runs.services import batches
from tests.execution.test_restarts import (
    METHOD,
    make_plan,
    managed_instance,
    managed_target,
    stop_what_runs,
)
from tests.helpers import global_variable, wait_for_batch
from tests.servers import PrivateMariaDB

OWNERS_OWN = "--innodb-log-buffer-size=20M"  # on the command line only


@pytest.fixture
def managed() -> Iterator[PrivateMariaDB]:
    yield from managed_instance(PrivateMariaDB())


def command_line(server: PrivateMariaDB) -> list[str]:
    pid = (server.dir / "mariadb.pid").read_text().split()[0]
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def started_by_its_owner_with(server: PrivateMariaDB, word: str) -> None:
    """The server started again by its owner, `word` added to its command line."""
    argv = command_line(server)
    stop_what_runs(server)
    subprocess.Popen([*argv, word], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        try:
            global_variable(server, "version")
            return
        except Exception:
            assert time.monotonic() < deadline, "the owner's start did not answer"
            time.sleep(0.2)


def test_settings_read_back_are_said_by_name_with_both_values():
    found = {"innodb_log_buffer_size": "20971520", "gtid_binlog_pos": "0-1-5", "port": "1"}
    now = {"innodb_log_buffer_size": "16777216", "gtid_binlog_pos": "0-1-9", "port": "1"}
    assert came_back_unlike(found, now) == ["innodb_log_buffer_size 16777216 (was 20971520)"]
    assert came_back_unlike(found, {**found, "gtid_binlog_pos": "x"}) == []
    assert came_back_unlike({"a": "1"}, {}) == ["a gone (was 1)"]


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_the_put_back_starts_the_server_as_it_was_found_its_command_line_too(
    celery_worker, local_host, managed
):
    started_by_its_owner_with(managed, OWNERS_OWN)
    assert global_variable(managed, "innodb_log_buffer_size") == str(20 * 1024 * 1024)
    original = global_variable(managed, METHOD)
    plan = make_plan(
        managed_target(managed),
        local_host,
        servers={
            "configs": [{"label": "fsync", "text": "innodb_flush_method = fsync"}],
            "after_restart": "cold",
        },
        repeats=1,
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, batch.stages)
    restart = next(s for s in batch.stages if s["kind"] == "restart")
    assert restart["ok"], restart  # the batch's own start, from the install's config
    restore = batch.stages[-1]
    assert restore["kind"] == "restore" and restore["ok"], restore
    assert restore["unlike_found"] == [], restore  # every setting read back as found
    assert not [w for w in batch.warnings if "unlike it was found" in w]
    assert global_variable(managed, "innodb_log_buffer_size") == str(20 * 1024 * 1024)
    assert global_variable(managed, METHOD) == original
    assert OWNERS_OWN in command_line(managed)  # started as it was found
    assert not (managed.datadir / "benchdash-options.cnf").exists()
