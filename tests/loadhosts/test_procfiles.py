"""This machine's /proc read with files kept open (runs/loadhosts/procfiles.py), with this
test process as the 'database server': a thread that comes is read from its next
snapshot, one that goes is dropped with its file, and nothing is lost on the way; and a
private PostgreSQL's postmaster with its backends."""

from __future__ import annotations

import mmap
import os
import threading
import time
from pathlib import Path

from runs.loadhosts import procfiles
from runs.loadhosts.procfiles import ProcFiles, local_snapshot


def switches_of_every_thread(pid: int) -> int:
    """The process's voluntary context switches, summed over its threads read anew."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in procfiles.read_once(str(task / "status")).decode().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


def wait_until_gone(path: str, within_s: float = 5.0) -> None:
    deadline = time.monotonic() + within_s
    while os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} still there after {within_s} s"
        time.sleep(0.01)


def test_a_thread_that_comes_is_read_and_one_that_goes_is_dropped():
    files = ProcFiles()
    pid = os.getpid()
    try:
        first = local_snapshot(pid, files)
        started, done = threading.Event(), threading.Event()

        def server_thread() -> None:
            started.set()
            done.wait(10)

        thread = threading.Thread(target=server_thread)
        thread.start()
        started.wait(5)
        # Its own file, not a count: the test process's other threads come and go too.
        status = f"/proc/{pid}/task/{thread.native_id}/status"
        assert not files.holds(status)
        local_snapshot(pid, files)
        assert files.holds(status)  # its status, read from now on
        done.set()
        thread.join()
        # join() returns when Python's thread state is released, a moment before the
        # kernel reaps the task: the gone thread is the one whose directory is gone.
        wait_until_gone(f"/proc/{pid}/task/{thread.native_id}")
        before = switches_of_every_thread(pid)
        after_snapshot = local_snapshot(pid, files)
        after = switches_of_every_thread(pid)
        assert not files.holds(status)  # the gone thread's status closed
        # Every thread's switches, summed into the main thread's line.
        assert before <= after_snapshot.processes[pid][2] <= after
        assert first.processes[pid][2] > 0
    finally:
        files.close()
    assert files.open_count == 0


def test_the_machine_files_read_again_give_the_same_text_as_read_anew():
    files = ProcFiles()
    try:
        for _ in range(3):  # read again from the start, not from where the last read ended
            kept = files.read("/proc/meminfo").decode()
            assert kept.startswith("MemTotal:") and kept.count("\n") > 5
    finally:
        files.close()


def test_beyond_its_limit_a_file_is_read_without_being_kept(monkeypatch):
    monkeypatch.setattr(procfiles, "MAX_OPEN", 1)
    files = ProcFiles()
    try:
        assert files.read("/proc/uptime")
        assert files.read("/proc/meminfo").startswith(b"MemTotal:")  # read all the same
        assert files.open_count == 1
    finally:
        files.close()


def test_a_file_longer_than_a_page_is_read_to_its_end():
    # The kernel hands /proc/self/smaps over a page at a time: the rest is read too.
    files = ProcFiles()
    try:
        kept = files.read("/proc/self/smaps")
    finally:
        files.close()
    whole = procfiles.read_once("/proc/self/smaps")
    assert len(kept) > 2 * mmap.PAGESIZE
    assert kept.splitlines()[-1] == whole.splitlines()[-1]  # the last mapping's last line


def test_the_postmaster_is_read_with_its_backends(postgres_server):
    """PostgreSQL forks a backend per connection from the postmaster's main thread: each
    is read, as its own process."""
    pid = int((postgres_server.datadir / "postmaster.pid").read_text().split()[0])
    files = ProcFiles()
    with postgres_server.connect() as one, postgres_server.connect() as two:
        backends = {int(c.execute("SELECT pg_backend_pid()").fetchone()[0]) for c in (one, two)}
        try:
            processes = local_snapshot(pid, files).processes
        finally:
            files.close()
    assert pid in processes and backends <= set(processes)
    assert all(counts[2] + counts[3] > 0 for counts in processes.values())  # switches, each
