"""This machine's /proc files for the host metrics, read with as few system calls as the
kernel allows, into the snapshot the remote loop's text gives (runs/loadhosts/procstream.py).

Each file is opened once and read again from its start each second: one pread, where a
glob, an open, a read and a close a file cost the worker about 1 ms a second for a
server of ten threads, the largest part of what a running cell cost it. The server's
threads are listed again each second (one directory read a process), so a thread that
comes is read from its first second, and the descriptor of one that went is closed.
"""

from __future__ import annotations

import mmap
import os
import time

from runs.analysis.host_metrics.procfs import ProcSnapshot, file_parse, io_parse, process_parse

SYSTEM_FILES = ("/proc/uptime", "/proc/stat", "/proc/meminfo", "/proc/diskstats", "/proc/net/dev")
# Descriptors held open at most: a server of thousands of threads (one a connection) has
# the rest of its files read the slow way, rather than take the worker's descriptors.
MAX_OPEN = 512
READ_SIZE = 65536
WHOLE_BELOW = mmap.PAGESIZE - 512  # no line of these files is that long


class ProcFiles:
    """Files kept open from one reading to the next."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        self._read: set[str] = set()
        # Files the kernel refused (another user's /proc/<pid>/io): why, not asked again.
        self._refused: dict[str, str] = {}
        # The server's processes' threads as last listed: process id -> (count, thread ids).
        self.threads: dict[str, tuple[int, list[str]]] = {}

    def read(self, path: str) -> bytes:
        """The file's bytes now; b"" when it is gone (a process or thread that ended)."""
        fd = self._fds.get(path)
        if fd is None:
            if len(self._fds) >= MAX_OPEN:
                return read_once(path)
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return b""
            self._fds[path] = fd
        self._read.add(path)
        try:
            return _pread_all(fd)
        except OSError:
            # Its process ended; the same id may be a new process already: read afresh.
            self._close(path)
            return read_once(path)

    def read_or_why(self, path: str) -> tuple[bytes, str]:
        """The file's bytes now, or b"" and why the kernel refused it (EACCES: a process
        of another user's, as the shared MariaDB running as mysql); b"" and "" when gone.
        A refusal is remembered: not one failed open a second."""
        why = self._refused.get(path)
        if why is None and path not in self._fds:
            try:
                os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
            except PermissionError as e:
                why = f"cannot read {path}: {e.strerror}"
            except OSError:
                return b"", ""
        if why is None:
            text = self.read(path)
            if text or path in self._fds:
                return text, ""
            why = _refusal(path)
            if not why:
                return b"", ""
        self._refused[path] = why
        self._read.add(path)
        return b"", why

    @property
    def open_count(self) -> int:
        return len(self._fds)

    def holds(self, path: str) -> bool:
        """Whether the file is kept open for the next reading."""
        return path in self._fds

    def forget_unread(self) -> None:
        """Close the files not read since the last call: threads and processes gone."""
        for path in self._fds.keys() - self._read:
            self._close(path)
        for path in self._refused.keys() - self._read:
            del self._refused[path]
        self._read = set()

    def close(self) -> None:
        for path in list(self._fds):
            self._close(path)

    def _close(self, path: str) -> None:
        os.close(self._fds.pop(path))


def _pread_all(fd: int) -> bytes:
    # The kernel's read of a /proc file stops short of the request at the file's end, or
    # where its next line no longer fits the buffer (a page at least): a chunk shorter
    # than a page less a long line is the whole file, and the read that would say so is
    # saved (half of the reads a second).
    chunk = os.pread(fd, READ_SIZE, 0)
    if len(chunk) < WHOLE_BELOW:
        return chunk
    chunks, offset = [chunk], len(chunk)
    while chunk := os.pread(fd, READ_SIZE, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _refusal(path: str) -> str:
    """Why a file that gave nothing cannot be read; "" when it is gone or empty."""
    try:
        with open(path, "rb") as f:
            f.read(1)
    except PermissionError as e:
        return f"cannot read {path}: {e.strerror}"
    except OSError:
        pass
    return ""


def read_once(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""  # a process or device gone between listing and reading


def local_snapshot(
    pid: int | None, files: ProcFiles, sysbench_pid: int | None = None
) -> ProcSnapshot:
    """This machine's files read straight into a snapshot: what the remote loop's text
    gives once parsed (procfs.snapshot_parse), without writing that text and parsing it
    again. /proc/uptime is the boot-time clock, read here without a system call.
    `sysbench_pid`: sysbench's process on this machine, once started: its own CPU."""
    snapshot = ProcSnapshot(uptime_s=round(time.clock_gettime(time.CLOCK_BOOTTIME), 2))
    for path in SYSTEM_FILES[1:]:
        file_parse(snapshot, path, files.read(path).decode("ascii", "replace"))
    if pid is not None:
        _processes(snapshot, pid, files)
    if sysbench_pid is not None:
        snapshot.sysbench = sysbench_stat(sysbench_pid, files.read(f"/proc/{sysbench_pid}/stat"))
    files.forget_unread()
    return snapshot


def sysbench_stat(pid: int, stat: bytes) -> list[int] | None:
    """[pid, utime, stime] from sysbench's /proc/<pid>/stat: the process's counters
    cover all its threads (sysbench is one process); None once it is gone (a zombie's
    counters still hold, and it reads the same as the second before)."""
    fields = stat.rpartition(b")")[2].split()
    return [pid, int(fields[11]), int(fields[12])] if len(fields) >= 13 else None


def _processes(snapshot: ProcSnapshot, pid: int, files: ProcFiles) -> None:
    """The server's process and its children (PostgreSQL's backends): each one's stat,
    and its threads' context switches, summed. The children are its main thread's: a
    server forks from there (PostgreSQL's postmaster has no other thread), and reading
    each thread's list cost a read a thread a second for MariaDB's, which fork nothing."""
    children = files.read(f"/proc/{pid}/task/{pid}/children").split()
    threads: dict[str, tuple[int, list[str]]] = {}
    for p in [str(pid), *(child.decode() for child in children)]:
        stat = files.read(f"/proc/{p}/stat").strip()
        if not stat:
            continue  # ended since it was listed
        if not snapshot.io_problem:  # one refusal says it for all: one owner
            # Its own storage I/O: one more pread of a small file a process a second.
            io, snapshot.io_problem = files.read_or_why(f"/proc/{p}/io")
            io_parse(snapshot, int(p), io.decode("ascii", "replace"))
        voluntary = involuntary = 0
        for status in _thread_statuses(p, files, threads):
            v, nv = _ctxt_counts(status)
            voluntary, involuntary = voluntary + v, involuntary + nv
        process_parse(snapshot, int(p), stat.decode("utf-8", "replace"), (voluntary, involuntary))
    files.threads = threads


def _thread_statuses(
    p: str, files: ProcFiles, threads: dict[str, tuple[int, list[str]]]
) -> list[bytes]:
    """Each thread's status. The threads are listed again only when their number (in the
    main thread's status) changed or one of them is gone: a directory read a process a
    second saved, a hundred for PostgreSQL's backends."""
    main = files.read(f"/proc/{p}/task/{p}/status")
    count = _threads_in(main)
    known = files.threads.get(p)
    tids = known[1] if known is not None and known[0] == count else _tasks(p)
    statuses = [main if t == p else files.read(f"/proc/{p}/task/{t}/status") for t in tids]
    if len(tids) == count and all(statuses):
        threads[p] = (count, tids)
    return statuses


def _threads_in(status: bytes) -> int:
    at = status.find(b"\nThreads:")
    return int(status[at + 9 : status.index(b"\n", at + 1)]) if at >= 0 else -1


def _tasks(pid: str) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []  # ended since it was listed


def _ctxt_counts(status: bytes) -> tuple[int, int]:
    """A thread's voluntary and involuntary context switches, from its status: near its
    end (only a few architecture lines may follow them), found from there instead of
    splitting its fifty-odd lines; (0, 0) for a thread gone."""
    return _count_after(status, b"\nvoluntary_ctxt_switches:"), _count_after(
        status, b"\nnonvoluntary_ctxt_switches:"
    )


def _count_after(status: bytes, name: bytes) -> int:
    at = status.rfind(name)
    if at < 0:
        return 0
    start = at + len(name)
    end = status.find(b"\n", start)
    return int(status[start : end if end >= 0 else None])


def local_pid(pid_file: str) -> tuple[int | None, str]:
    """The server's process id from its pid file; or why there is none."""
    if not pid_file:
        return None, ""
    try:
        with open(pid_file) as f:
            text = f.readline().strip()
    except OSError as e:
        return None, f"cannot read the server's process id from {pid_file}: {e.strerror}"
    if not text.isdigit() or not os.path.isdir(f"/proc/{text}"):
        return None, f"{pid_file} names no running process ({text!r})"
    return int(text), ""
