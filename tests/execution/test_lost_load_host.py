"""A load host lost mid-cell (issue 38): its sshd killed under a running sysbench. No file
with the target's password stays on it, the batch waits for it (bounded, shown), and the
data set is dropped on the target from the worker."""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import stat
from pathlib import Path

import pytest

from runs.models import Batch, LoadHost, Sample, Status
from runs.services import batches
from tests.helpers import wait_for_batch, wait_until
from tests.servers import PrivateSSHD, SSHKey

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _tree(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return seen


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _files_holding(directory: str, secret: str) -> list[str]:
    """Regular files of sysbench's private directory on the load host (this machine) that
    hold `secret`. A FIFO is never opened: it holds nothing and would block."""
    found = []
    for path in glob.glob(f"{directory}/*"):
        try:
            if stat.S_ISREG(os.lstat(path).st_mode) and secret in Path(path).read_text():
                found.append(path)
        except OSError:
            pass  # removed meanwhile
    return found


def test_a_load_host_lost_mid_cell_leaves_no_password_and_drops_the_data_set(
    celery_worker, make_plan, target, mariadb_server, mariadb_db, settings
):
    settings.BENCHDASH_TARGET_WAIT_S = 4
    sshd = PrivateSSHD().start()
    try:
        key = SSHKey.generate()
        sshd.authorize(key)
        host = LoadHost.objects.create(
            name="lost-host",
            kind="ssh",
            address=sshd.host,
            port=sshd.port,
            user=sshd.user,
            private_key=key.private,
            host_key=sshd.host_key.public,
        )
        plan = make_plan(
            load_host=host,
            test="oltp_read_only",
            threads=[1, 2],
            options={"time": 8, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
        )
        batch = batches.batch_launch(plan=plan)
        wait_until(
            lambda: (
                Sample.objects.filter(run__batch=batch, run__position=0).count() >= 2
                or Batch.objects.get(pk=batch.pk).finished_at is not None
            ),
            timeout=120,
            what="samples",
        )
        batch.refresh_from_db()
        assert batch.finished_at is None, (batch.error, batch.stages)
        directory = batch.runs.get(position=0).config_dir
        assert directory.startswith("/tmp/benchdash.")
        # sysbench has started: the password is in no file on the load host any more.
        assert _files_holding(directory, mariadb_server.password) == []

        seen_waiting: list[str] = []

        def ended() -> bool:
            batch.refresh_from_db(fields=["status", "waiting_for"])
            if batch.waiting_for:
                seen_waiting.append(batch.waiting_for)
            return batch.status in (Status.FAILED, Status.DONE)

        assert sshd._process is not None
        for pid in _tree(sshd._process.pid):  # an sshd crash: sysbench is left running
            if _comm(pid) in ("sshd", "sshd-session"):
                os.kill(pid, signal.SIGKILL)
        wait_until(ended, timeout=150, what="the batch's end")
        batch = wait_for_batch(batch, timeout=30)

        run0 = batch.runs.get(position=0)
        assert "the SSH connection to load host lost-host was lost at" in run0.error, run0.error
        assert run0.error_kind == "load_host"
        assert any(w.startswith("waiting: load host lost-host") for w in seen_waiting)
        assert "the load host lost-host was unreachable for 4 s" in batch.error, batch.error
        cleanup = [s for s in batch.stages if s["kind"] == "cleanup"]
        assert cleanup and cleanup[-1]["ok"], batch.stages
        assert "dropped from the worker" in cleanup[-1]["reason"]
        db = mariadb_server.root_connect()
        try:
            cursor = db.cursor()
            cursor.execute(f"SHOW TABLES FROM `{mariadb_db}`")
            assert cursor.fetchall() == ()
        finally:
            db.close()
        assert _files_holding(directory, mariadb_server.password) == []
    finally:
        sshd.stop()
