"""A machine's /proc files once a second, as snapshots (procfs.ProcSnapshot), for the
host metrics.

Agentless: on an SSH host, one shell loop started once per cell over one pinned
connection prints the lines of the files that are read, each second (an awk, a sleep and,
for the database processes, a cat), each snapshot ended by a marker line, two seconds a
write after the first two; the worker takes them when it is awake for sysbench's lines.
The text's format and its parsing are runs/analysis/host_metrics/procfs.py's. On the
worker's own machine the worker reads the same files each second straight into a snapshot
(runs/loadhosts/procfiles.py): the same figures, without a text to write and parse.

On sysbench's load host the stream also reads sysbench's own /proc/<pid>/stat each second
once the worker names its process (`watch_sysbench`, as it starts sysbench): this machine's
reader straight away, the remote loop from the line the worker writes on its stdin.

The database server's processes come from a pid file (MariaDB's @@pid_file, PostgreSQL's
postmaster.pid): the process it names and its children (PostgreSQL's backends), each
summed over its threads (MariaDB's), and its own storage I/O (/proc/<pid>/io's read_bytes
and write_bytes: the machine's disks carry the neighbours' too). A pid file that cannot be
read is said, not guessed; so is an io file the kernel refuses (another user's process).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import ClassVar

import paramiko

from runs.analysis.host_metrics.procfs import ProcSnapshot, snapshot_parse
from runs.loadhosts import ssh
from runs.loadhosts.procfiles import ProcFiles, local_pid, local_snapshot
from runs.loadhosts.remote_scripts import remote_command

logger = logging.getLogger(__name__)

MARKER = "@@benchdash-snapshot"
MARKER_LINE = f"{MARKER}\n".encode()
# paramiko's transport thread wakes every 0.1 s to see whether it should stop: for a
# stream that speaks once a second that is most of its cost on the worker. Data still
# wakes it at once; closing waits up to this long.
TRANSPORT_WAKE_S = 10.0
# Seconds per write of the remote loop, after its first two: the rows of an SSH host go
# live two at a time (the earlier one a second late), for half the wakes on the worker.
SECONDS_PER_WRITE = 2

# $1: the database server's pid file, or ""; $2: the seconds a write carries; $3: "watch"
# on sysbench's load host (below), else "". Prints its
# clock tick and what became of the pid file once, then a snapshot a second until the
# connection goes (the worker closes it: awk's write then fails, and the loop ends with
# it): the first two seconds alone (the worker waits for them before sysbench starts),
# then $2 at a time, so that the worker's SSH transport wakes once per write, not once
# a second (each wake costs it about 0.2 ms, the largest part of a stream's cost).
# One awk a second (mawk where there is one: a third of gawk's CPU to start) reads the
# files and keeps only what runs/analysis/host_metrics/procfs.py reads: /proc/stat's cpu, ctxt and
# procs_running lines and intr's total, the memory lines of procfs.MEMINFO_KEYS, the
# disks that have moved (not loop, ram and the like, nor partitions), the interfaces
# that have carried anything. A quarter of the files' bytes, in one write (gawk flushes
# at each close: the text is gathered first): one SSH packet a second for the worker to
# decrypt and parse. The files are read by getline, not as awk's input, so that a
# process gone between the listing and the reading is skipped (mawk stops at a missing
# input file).
# sysbench starts after the loop (the busy start is read before it), so on its load host
# the worker names its process on the loop's stdin, one line, once it started it. sh
# cannot read stdin without blocking: a reader in the background puts the line, digits
# only, in a private directory (renamed into place: read whole or not at all), where the
# awk looks each second until it has it; from then on each second ends with a `sysbench`
# section, its /proc/<pid>/stat (its own CPU, over all its threads). The directory goes
# once the number is read, or with the loop; it holds the loop's pid as `pgid`, as a
# wrapper's directory does, so the sweeper (remote_scripts.py) removes one left by a
# killed loop.
PROC_LOOP = r"""
export LC_ALL=C
awk=$(command -v mawk || echo awk)
echo "@@benchdash-clk $(getconf CLK_TCK 2>/dev/null || echo 100)"
sbdir=
if [ "$3" = watch ] && sbdir=$(mktemp -d "${TMPDIR:-/tmp}/benchdash.XXXXXXXXXX"); then
  echo $$ >"$sbdir/pgid"
  exec 3<&0
  (IFS= read -r line <&3 && case $line in ''|*[!0-9]*) ;; *)
    echo "$line" >"$sbdir/new" && mv -f "$sbdir/new" "$sbdir/pid" ;; esac) &
  exec 3<&-
  trap '[ -z "$sbdir" ] || rm -rf -- "$sbdir"' EXIT
  trap 'exit 129' HUP
  trap 'exit 143' TERM
else
  sbdir=
fi
exec </dev/null
sb=
pid=
if [ -n "$1" ]; then
  if pid=$(head -n 1 -- "$1" 2>&1) && [ -d "/proc/$pid" ]; then
    echo "@@benchdash-pid $pid"
  else
    echo "@@benchdash-nopid cannot read the server's process id from $1: $pid"; pid=
  fi
fi
io=
if [ -n "$pid" ]; then
  if why=$(cat -- "/proc/$pid/io" 2>&1 >/dev/null); then io=1
  else echo "@@benchdash-noio cannot read /proc/$pid/io: ${why##*: }"; fi
fi
n=0
seconds=1
while :; do
  if [ -n "$sbdir" ] && [ -s "$sbdir/pid" ]; then
    sb=$(cat "$sbdir/pid") && rm -rf -- "$sbdir" && sbdir=
  fi
  files=
  if [ -n "$pid" ]; then
    for p in $pid $(cat /proc/$pid/task/$pid/children 2>/dev/null); do
      files="$files /proc/$p/stat${io:+ /proc/$p/io} /proc/$p/task/*/status"
    done
  fi
  "$awk" -v seconds="$seconds" -v sb="$sb" -v sbfile="${sbdir:+$sbdir/pid}" '
    function moved(w, n,  i) { for (i = 4; i <= n; i++) if (w[i] != 0) return 1; return 0 }
    function system_file(f,  line, n, w) {
      out = out "==> " f " <==\n"
      while ((getline line < f) > 0) {
        n = split(line, w)
        if (f == "/proc/stat") {
          if (w[1] == "intr") out = out "intr " w[2] "\n"
          else if (w[1] ~ /^cpu/ || w[1] == "ctxt" || w[1] == "procs_running") out = out line "\n"
        } else if (f == "/proc/meminfo") {
          if (w[1] ~ /^(MemTotal|MemFree|Buffers|Cached|SReclaimable|Dirty|Writeback):$/) \
            out = out line "\n"
        } else if (f == "/proc/diskstats") {
          if (w[3] !~ /^(loop|ram|zram|sr|fd|nbd)/ && w[3] !~ /^(sd|hd|vd|xvd)[a-z]+[0-9]+$/ \
              && w[3] !~ /^(nvme[0-9]+n[0-9]+|mmcblk[0-9]+)p[0-9]+$/ && moved(w, n)) \
            out = out line "\n"
        } else if (f == "/proc/net/dev") {
          if (index(line, ":") && substr(line, index(line, ":") + 1) ~ /[1-9]/) out = out line "\n"
        } else out = out line "\n"
      }
      close(f)
    }
    function process_file(f,  line) {
      while ((getline line < f) > 0)
        if (f ~ /\/stat$/ || line ~ /^((non)?voluntary_ctxt_switches|read_bytes|write_bytes):/) \
          out = out f ":" line "\n"
      close(f)
    }
    function sysbench_file(f,  line) {
      if ((getline line < f) > 0) out = out "==> sysbench <==\n" line "\n"
      close(f)
    }
    BEGIN {
      for (r = 1; r <= seconds; r++) {
        if (r > 1) system("sleep 1")
        if (sb == "" && sbfile != "") {
          if ((getline line < sbfile) > 0 && line ~ /^[0-9]+$/) sb = line
          close(sbfile)
        }
        for (i = 1; i < ARGC; i++)
          if (ARGV[i] ~ /^\/proc\/[0-9]/) process_file(ARGV[i]); else system_file(ARGV[i])
        if (sb != "") sysbench_file("/proc/" sb "/stat")
        out = out "@@benchdash-snapshot\n"
      }
      printf "%s", out
    }' /proc/uptime /proc/stat /proc/meminfo /proc/diskstats /proc/net/dev $files || exit
  n=$((n + 1))
  [ "$n" -lt 2 ] || seconds=$2
  sleep 1
done
"""


@dataclass
class ProcStream:
    """Snapshots as they came: (monotonic time of arrival, snapshot). No thread of its own:
    the worker collects them when it is awake anyway (`take`, at each batch of sysbench's
    lines), which costs it less than a thread waking every second."""

    host: str
    clk_tck: int = 100
    pid: int | None = None
    problem: str = ""  # why the database process is not in the snapshots, or why none came
    io_problem: str = ""  # why its /proc/<pid>/io is not (another user's process)
    stopped: str = ""  # why the snapshots stopped before the stream was closed
    # The seconds it may hold, not handed over yet, when it is closed: late, not lost.
    unwritten_s: ClassVar[float] = 1.0
    _snapshots: list[tuple[float, ProcSnapshot]] = field(default_factory=list)
    _taken: int = 0

    def take(self, every: bool = False) -> list[tuple[float, ProcSnapshot]]:
        """The snapshots that came since the last call: after the first two, only once
        SECONDS_PER_WRITE have come (an SSH host's come so; this machine's are read each
        second and handed over so, to be turned into figures one after the other while
        the code is warm); `every`: all there are (before sysbench starts, after it ends)."""
        self.poll()
        count = len(self._snapshots)
        if not every and self._taken >= 2 and count - self._taken < SECONDS_PER_WRITE:
            return []
        new = self._snapshots[self._taken : count]
        self._taken = count
        return new

    def arrived(self) -> int:
        self.poll()
        return len(self._snapshots)

    def poll(self) -> None: ...

    def watch_sysbench(self, pid: int) -> None:
        """sysbench just started on this host as `pid`: its own CPU from now on."""

    def close(self) -> None: ...


FIRST_INTERVAL_S = 0.25  # this machine's first interval: enough ticks for a busy share


class LocalProcStream(ProcStream):
    """This machine's /proc, read when the worker asks and a period has passed."""

    def __init__(self, host: str, pid_file: str = "", period_s: float = 1.0) -> None:
        super().__init__(host=host, clk_tck=os.sysconf("SC_CLK_TCK"))
        self.period_s = period_s
        self.pid, self.problem = local_pid(pid_file)
        self.sysbench_pid: int | None = None
        self._files = ProcFiles()
        self.poll()

    def watch_sysbench(self, pid: int) -> None:
        self.sysbench_pid = pid

    def poll(self) -> None:
        # Nine tenths: a worker woken by sysbench's line each second reads each second.
        # The first interval is short: it is how busy the machine was just before the
        # cell, and a cell should not wait a second for it (rates use the real interval).
        now = time.monotonic()
        period = FIRST_INTERVAL_S if len(self._snapshots) == 1 else 0.9 * self.period_s
        if not self._snapshots or now - self._snapshots[-1][0] >= period:
            snapshot = local_snapshot(self.pid, self._files, self.sysbench_pid)
            self._snapshots.append((now, snapshot))

    def close(self) -> None:
        self._files.close()


class SSHProcStream(ProcStream):
    """A remote host's /proc, streamed by one shell loop over one SSH connection."""

    unwritten_s: ClassVar[float] = SECONDS_PER_WRITE

    def __init__(self, host: ssh.SSHHost, pid_file: str = "", *, load: bool = False) -> None:
        """`load`: sysbench runs on this host: the loop keeps its stdin open for the
        line that names sysbench's process (watch_sysbench)."""
        super().__init__(host=host.name)
        self._transport: paramiko.Transport | None = ssh.connect(host)
        self._watching = load
        try:
            self._transport.sock.settimeout(TRANSPORT_WAKE_S)
            watch = "watch" if load else ""
            command = remote_command(PROC_LOOP, pid_file, str(SECONDS_PER_WRITE), watch)
            self._reader = ssh.open_command(self._transport, command, host.timeout)
            if not load:
                self._reader.channel.shutdown_write()
        except BaseException:
            self._transport.close()
            raise
        self._pending = b""

    def watch_sysbench(self, pid: int) -> None:
        """The loop is told on its stdin, a number and nothing else (it takes digits
        only), and the stdin ends: one sysbench per stream."""
        if not self._watching or self._transport is None:
            return
        self._watching = False
        try:
            self._reader.channel.sendall(f"{int(pid)}\n".encode("ascii"))
            self._reader.channel.shutdown_write()
        except (OSError, EOFError, paramiko.SSHException) as e:
            # The rows then carry no sysbench figure: the host's totals are read instead.
            logger.warning("cannot name sysbench's process to the sampler on %s: %s", self.host, e)

    def poll(self) -> None:
        """Take what the loop printed: each snapshot dated by the host's own clock
        (its uptime) back from now, so a late poll keeps the seconds apart."""
        if self._transport is None or self._reader.done:
            self._said_nothing()
            self._stopped_early()
            return
        try:
            if self._reader.pump(0):
                self._consume(self._reader.stdout_bytes(), time.monotonic())
        except (OSError, EOFError, paramiko.SSHException) as e:
            self.problem = self.problem or f"the sampler's connection to {self.host} ended: {e}"

    def _said_nothing(self) -> None:
        if not self._snapshots and not self.problem and self._transport is not None:
            said = " ".join(self._reader.stderr_lines(final=True))[-300:]
            self.problem = f"the /proc sampler on {self.host} printed nothing {said}".strip()

    def _stopped_early(self) -> None:
        """The loop ended while the worker still listened (it closes the stream at the
        end): its host's seconds from there are lost, and the run says so."""
        if self._snapshots and not self.stopped and self._transport is not None:
            said = " ".join(self._reader.stderr_lines(final=True))[-300:]
            self.stopped = (
                f"the /proc sampler on {self.host} stopped after {len(self._snapshots)} s: "
                f"its loop or its connection ended {said}"
            ).strip()

    def _consume(self, data: bytes, now: float) -> None:
        """Cut what came at the markers: the bytes, not lines, so a second's snapshot
        is decoded once, whole, and parsed. The loop's header lines come before the first."""
        self._pending += data
        if MARKER_LINE not in self._pending:
            return
        *raw_snapshots, self._pending = self._pending.split(MARKER_LINE)
        complete = []
        for raw in raw_snapshots:
            text = raw.decode("utf-8", errors="replace")
            while text.startswith("@@benchdash-"):
                line, _, text = text.partition("\n")
                self._header(line)
            if text.strip():
                complete.append(snapshot := snapshot_parse(text))
                snapshot.io_problem = self.io_problem
        if len(complete) == 1:  # the usual: one second, just come
            self._snapshots.append((now, complete[0]))
        elif complete:
            last = complete[-1].uptime_s
            self._snapshots += [(now - (last - s.uptime_s), s) for s in complete]

    def _header(self, line: str) -> None:
        name, _, value = line.partition(" ")
        if name == "@@benchdash-clk" and value.isdigit():
            self.clk_tck = int(value)
        elif name == "@@benchdash-pid" and value.isdigit():
            self.pid = int(value)
        elif name == "@@benchdash-nopid":
            self.problem = value
        elif name == "@@benchdash-noio":
            self.io_problem = value

    def close(self) -> None:
        self._said_nothing()
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()
