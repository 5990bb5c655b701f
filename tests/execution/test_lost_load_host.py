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


def _sysbench_alive(pgid: int | None) -> bool:
    return pgid is not None and _comm(pgid) == "sysbench"


def test_a_load_host_back_during_the_wait_goes_on_with_the_next_cell(
    celery_worker, make_plan, target, mariadb_server, mariadb_db, settings
):
    """The same sshd back on the same port while the batch waits: the sysbench the lost
    connection left there is stopped, its directory is gone, and the next cell runs."""
    settings.BENCHDASH_TARGET_WAIT_S = 90
    sshd = PrivateSSHD().start()
    try:
        key = SSHKey.generate()
        sshd.authorize(key)
        host = LoadHost.objects.create(
            name="back-host",
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
            # long enough that the first sysbench still runs when the host is back
            options={"time": 25, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10},
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
        run0 = batch.runs.get(position=0)
        assert run0.finished_at is None, (run0.error, batch.stages)
        directory, pgid = run0.config_dir, run0.pgid
        assert directory.startswith("/tmp/benchdash.") and _sysbench_alive(pgid)

        assert sshd._process is not None
        for pid in _tree(sshd._process.pid):  # an sshd crash: sysbench is left running
            if _comm(pid) in ("sshd", "sshd-session"):
                os.kill(pid, signal.SIGKILL)
        sshd._process.wait()

        def waiting() -> bool:
            batch.refresh_from_db(fields=["waiting_for", "finished_at"])
            return batch.waiting_for.startswith("waiting: load host back-host") or bool(
                batch.finished_at
            )

        wait_until(waiting, timeout=60, what="the wait for the load host")
        assert batch.finished_at is None, batch.error
        assert _sysbench_alive(pgid)  # still loading the target while the host is away
        # Still recorded: the directory may be on the host, for the next contact to remove.
        assert batch.runs.get(position=0).config_dir == directory
        sshd.restart()

        wait_until(
            lambda: batch.runs.get(position=1).status != Status.QUEUED,
            timeout=60,
            what="the next cell",
        )
        # Back at the next contact: the left sysbench stopped, its directory removed.
        assert not _sysbench_alive(pgid)
        assert not os.path.exists(directory), os.listdir(directory)
        batch = wait_for_batch(batch, timeout=120)

        run0, run1 = batch.runs.get(position=0), batch.runs.get(position=1)
        assert "the SSH connection to load host back-host was lost at" in run0.error, run0.error
        assert run1.status == Status.DONE, (run1.error, batch.error)
        assert not _sysbench_alive(run1.pgid)
        assert any("answered again" in w for w in batch.warnings), batch.warnings
        assert batch.waiting_for == ""
        assert [r.config_dir for r in batch.runs.all()] == ["", ""]
        assert _files_holding(directory, mariadb_server.password) == []
        db = mariadb_server.root_connect()
        try:
            cursor = db.cursor()
            cursor.execute(f"SHOW TABLES FROM `{mariadb_db}`")
            assert cursor.fetchall() == ()  # the batch's own cleanup ran on the host
        finally:
            db.close()
    finally:
        sshd.stop()
