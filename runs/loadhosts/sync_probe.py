"""The sync probe: how long one fsync takes on the server's redo-log (or WAL) file system
while a cell runs, for the servers that do not time their own (MariaDB 10.8+, whose
performance_schema has no redo-log row; PostgreSQL without track_wal_io_timing).

A small program (Python's standard library only) runs on the server host: on this machine
as a child of the worker, on an SSH server host over its own connection with the host's
pinned key, as the /proc sampler does (runs/loadhosts/procstream.py). It makes a private
file on the file system of the server's log directory (the data directory first; else the
log directory, the home directory, /var/tmp or /tmp when they are on that file system),
unlinks it at once (nothing is left behind, whatever ends the probe), writes it whole
once and syncs it: preallocated like InnoDB's ib_logfile0, so that its later writes change
no size and no extent, and need no journal commit. Then, a few times a second, it
overwrites one block at the next offset (the log's write size: 4 KiB for InnoDB, the WAL
block for PostgreSQL) and times the fdatasync that follows, as the server syncs its log:
after an O_DIRECT write where the server writes its log so (MariaDB 10.8+ with
innodb_log_file_buffering OFF: the sync then flushes the device's cache only), else after
a buffered write (the sync writes the block, then flushes).

Each sample is two syncs: one after the pause, and one at once after it. A sync's time
depends on how long the machine was idle before it: on this project's machine 0.10 ms
after 50 ms, 0.08 ms after 1 ms, 0.024 ms back to back (the CPU's idle states: a sync
that finds its core asleep waits for it to wake). A server syncing its log 5,000 times a
second meets the second figure, one committing 150 times a second the first
(runs/analysis/why/fsyncs.py takes the one the server's own pace calls for).

Its lines: `@@benchdash-sync-start <its monotonic clock>` at once; then
`@@benchdash-sync-ready <directory> <mode> <block> <blocks>` or `@@benchdash-sync-problem
<why>`; then one `<clock at the sync> <sync s> <write s> <its CPU s> <streamed sync s>
<streamed write s>` per sample. The writes are timed too: an O_DIRECT write waits for the
device as a sync does, and MariaDB writes its log twice a transaction under
innodb_flush_log_at_trx_commit=2 where it writes and syncs it once under 1. It ends
when its output goes (the worker closed it). Parsing and summing up, and where the
server's log is (SyncSite): runs/analysis/host_metrics/sync_probe.py.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

import paramiko

from runs.analysis.host_metrics.sync_probe import SyncSite
from runs.loadhosts import ssh
from runs.loadhosts.remote_scripts import remote_command

START = "@@benchdash-sync-start"
STARTED_WITHIN_S = 5.0  # the probe's first line, or it is said not to have started

# argv: log directory, data directory, block size, "1" for O_DIRECT, mean seconds apart.
# The pause between two samples is drawn uniformly from half to one and a half times the
# mean: a fixed period could lock onto a server's own period (PostgreSQL's WAL writer
# wakes every 200 ms, InnoDB's master thread each second) and sample one phase of it.
PROBE = r"""
import mmap, os, random, sys, time
BLOCKS = 64  # the file's blocks, overwritten in turn: 256 KiB at 4 KiB

def say(*words):
    try:
        print(*words, flush=True)
    except (BrokenPipeError, OSError):
        os._exit(0)

say("@@benchdash-sync-start", "%.6f" % time.monotonic())
log_dir, data_dir, block, direct, every = sys.argv[1:6]
block, every = int(block), float(every)
try:
    device = os.stat(log_dir).st_dev
except OSError as e:
    say("@@benchdash-sync-problem", "cannot see the log directory %s: %s" % (log_dir, e.strerror))
    sys.exit(0)
tried, fd = [], None
for d in dict.fromkeys([data_dir, log_dir, os.environ.get("HOME", ""), "/var/tmp", "/tmp"]):
    try:
        if not d or os.stat(d).st_dev != device:
            continue
        path = os.path.join(d, ".benchdash-sync-probe-%d" % os.getpid())
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as e:
        tried.append("%s (%s)" % (d, e.strerror))
        continue
    os.unlink(path)
    break
if fd is None:
    none = "none of the data directory, home, /var/tmp, /tmp is on it"
    say("@@benchdash-sync-problem", "no directory on the file system of %s may be written: %s"
        % (log_dir, "; ".join(tried) or none))
    sys.exit(0)
buffer = mmap.mmap(-1, block)
buffer.write(b"\x5a" * block)
for i in range(BLOCKS):
    os.pwrite(fd, buffer, i * block)
os.fsync(fd)
mode = "buffered"
if direct == "1":
    try:
        fd = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_DIRECT | os.O_CLOEXEC)
        mode = "direct"
    except OSError:
        mode = "buffered"  # a file system without O_DIRECT (tmpfs): as the server would
say("@@benchdash-sync-ready", d, mode, block, BLOCKS)
i = 0

def sync():
    global i
    before = time.monotonic()
    try:
        os.pwrite(fd, buffer, (i % BLOCKS) * block)
        written = time.monotonic()
        os.fdatasync(fd)
    except OSError as e:  # a full disk, an O_DIRECT block the device refuses
        say("@@benchdash-sync-problem", "the probe's write or sync failed: %s" % e.strerror)
        sys.exit(0)
    i += 1
    return written, time.monotonic() - written, written - before

while True:
    time.sleep(every * random.uniform(0.5, 1.5))
    written, alone, took = sync()  # after a pause, as a server's lone commit syncs
    _, streamed, streamed_took = sync()  # at once after it, as a server's syncs in a stream
    say("%.6f %.6f %.6f %.6f %.6f %.6f"
        % (written, alone, took, time.process_time(), streamed, streamed_took))
"""

# Over SSH: python3 where there is one, else the probe says why it could not run.
REMOTE = r"""
command -v python3 >/dev/null 2>&1 ||
  { echo "@@benchdash-sync-problem no python3 on $(uname -n)"; exit 0; }
probe=$1; shift
exec python3 -c "$probe" "$@"
"""


@dataclass
class SyncProbe:
    """A running probe's lines as they came; `offset` turns its clock into the worker's
    (time.monotonic), from when its first line arrived."""

    host: str
    lines: list[str] = field(default_factory=list)
    offset: float | None = None
    problem: str = ""
    _pending: bytes = b""

    def _consume(self, data: bytes, now: float) -> None:
        *complete, self._pending = (self._pending + data).split(b"\n")
        for raw in complete:
            line = raw.decode("utf-8", errors="replace")
            if line.startswith(START) and self.offset is None:
                with contextlib.suppress(ValueError, IndexError):
                    self.offset = now - float(line.split()[1])
            elif line.startswith("@@benchdash-sync-problem "):
                self.problem = line.split(" ", 1)[1]
            self.lines.append(line)

    def _wait_for_start(self) -> None:
        deadline = time.monotonic() + STARTED_WITHIN_S
        while self.offset is None and not self.problem and time.monotonic() < deadline:
            self.poll()
            time.sleep(0.01)
        if self.offset is None and not self.problem:
            self.problem = (
                f"the sync probe on {self.host} did not start within {STARTED_WITHIN_S:.0f} s"
            )

    def poll(self) -> None: ...

    def close(self) -> None: ...


class LocalSyncProbe(SyncProbe):
    """The probe on the worker's own machine, a child process (one clock: no offset)."""

    def __init__(self, host: str, site: SyncSite, every_s: float) -> None:
        super().__init__(host=host)
        self._process = subprocess.Popen(
            [sys.executable, "-c", PROBE, *site.argv(every_s)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self._process.stdout is not None
        self._out = self._process.stdout.fileno()
        os.set_blocking(self._out, False)
        self._wait_for_start()

    def poll(self) -> None:
        if self._out < 0:  # closed: the worker may take its rows once more after
            return
        with contextlib.suppress(BlockingIOError):
            while data := os.read(self._out, 65536):
                self._consume(data, time.monotonic())

    def close(self) -> None:
        if self._out < 0:
            return
        self._process.kill()
        self._process.wait()
        self.poll()
        assert self._process.stdout is not None
        self._process.stdout.close()
        self._out = -1


class SSHSyncProbe(SyncProbe):
    """The probe on an SSH server host, over a connection of its own."""

    def __init__(self, host: ssh.SSHHost, site: SyncSite, every_s: float) -> None:
        super().__init__(host=host.name)
        self._transport: paramiko.Transport | None = ssh.connect(host)
        try:
            command = remote_command(REMOTE, PROBE, *site.argv(every_s))
            self._reader = ssh.open_command(self._transport, command, host.timeout)
            self._reader.channel.shutdown_write()
        except BaseException:
            self._transport.close()
            raise
        self._wait_for_start()

    def poll(self) -> None:
        if self._transport is None:
            return
        try:
            if self._reader.pump(0):
                self._consume(self._reader.stdout_bytes(), time.monotonic())
        except (OSError, EOFError, paramiko.SSHException) as e:
            self.problem = self.problem or f"the sync probe's connection to {self.host} ended: {e}"

    def close(self) -> None:
        self.poll()
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()
