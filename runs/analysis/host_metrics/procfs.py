"""What a machine did between two readings of its /proc files: the host metrics' rates.

Pure: no Django, no I/O. A snapshot comes as text in one format, the one the remote
sampler's shell loop prints (runs/loadhosts/procstream.py): `head`'s sections (`==>
/proc/stat <==` then the file) for the machine's files, then `grep -H` lines
(`/proc/<pid>/stat:...`, `/proc/<pid>/task/<tid>/status:voluntary_ctxt_switches:\t12`,
`/proc/<pid>/io:write_bytes: 4096`) for the database server's processes; on sysbench's
load host a `==> sysbench <==` section, its /proc/<pid>/stat. `snapshot_parse` reads one;
the local reader (runs/loadhosts/procfiles.py) fills a snapshot from the files themselves
with the same section readers (`file_parse`, `process_parse`, `io_parse`); `host_values`
turns two snapshots into the figures of a HostMetrics row (runs/models.py).

Counters are differenced: a counter that went backwards below 2**32 wrapped (32-bit
kernels keep some in an unsigned long); above, the device or process is new and is left
out of that interval rather than invented.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

PROCESS_LINE = re.compile(r"^/proc/(\d+)/(stat|io|task/\d+/status):(.*)$")
SECTOR_BYTES = 512
WRAP = 2**32
# Not a disk a database writes to, or a part of one already counted whole.
SKIPPED_DISK = re.compile(
    r"^(loop|ram|zram|sr|fd|nbd)\d*"
    r"|^(sd|hd|vd|xvd)[a-z]+\d+$"  # partitions of sda, vda, xvda...
    r"|^(nvme\d+n\d+|mmcblk\d+)p\d+$"
)
# diskstats fields after the name up to "time spent flushing" (kernels 5.5 and later)
FLUSH_FIELDS = 17
# CPU time columns of /proc/stat: user nice system idle iowait irq softirq steal
CPU_FIELDS = 8
# The lines of /proc/meminfo the memory figures use (the remote loop sends only these).
MEMINFO_KEYS = frozenset(
    {"MemTotal", "MemFree", "Buffers", "Cached", "SReclaimable", "Dirty", "Writeback"}
)


@dataclass
class ProcSnapshot:
    """One reading of a host's /proc files; counters as the kernel gave them."""

    uptime_s: float = 0.0
    cpus: dict[str, list[int]] = field(default_factory=dict)  # "cpu", "cpu0"...
    ctxt: int = 0
    intr: int = 0
    procs_running: int = 0
    meminfo_kb: dict[str, int] = field(default_factory=dict)
    disks: dict[str, list[int]] = field(default_factory=dict)  # diskstats fields after the name
    nets: dict[str, tuple[int, int]] = field(default_factory=dict)  # rx bytes, tx bytes
    processes: dict[int, list[int]] = field(default_factory=dict)  # pid: [utime, stime, v, nv]
    # pid: [read_bytes, write_bytes] of /proc/<pid>/io: what the process had the storage
    # layer read and write (not rchar/wchar, which count page-cache hits and pipes too).
    process_io: dict[int, list[int]] = field(default_factory=dict)
    io_problem: str = ""  # why /proc/<pid>/io was not read (another user's process)
    # sysbench's own process (all its threads), on its load host: [pid, utime, stime].
    sysbench: list[int] | None = None

    @property
    def has_process(self) -> bool:
        return bool(self.processes)


def snapshot_parse(text: str) -> ProcSnapshot:
    """A snapshot's text (see the module's docstring) as counters. Once a second per
    machine on the worker: each line is looked at once, by its first character, and only
    the fields used are converted."""
    snapshot = ProcSnapshot()
    reader = None
    for line in text.splitlines():
        if not line:
            continue
        first = line[0]
        if first == "=" and line.startswith("==> ") and line.endswith(" <=="):
            reader = _READERS.get(line[4:-4])  # `==> /proc/stat <==`
        elif first == "/" and (match := PROCESS_LINE.match(line)):
            _process_line(snapshot, int(match.group(1)), match.group(2), match.group(3))
        elif reader is not None and not line.isspace():
            reader(snapshot, line)
    return snapshot


def file_parse(snapshot: ProcSnapshot, path: str, text: str) -> None:
    """One of the machine's files (/proc/stat, /proc/meminfo, /proc/diskstats,
    /proc/net/dev) into `snapshot`, as snapshot_parse reads its section: for a reader of
    the files themselves (this machine's, runs/loadhosts/procfiles.py), with no text to
    write and parse again."""
    reader = _READERS[path]
    for line in text.splitlines():
        if line and not line.isspace():
            reader(snapshot, line)


def process_parse(snapshot: ProcSnapshot, pid: int, stat: str, switches: tuple[int, int]) -> None:
    """A server process into `snapshot`: its /proc/<pid>/stat line and its threads'
    voluntary and involuntary context switches, summed."""
    _process_line(snapshot, pid, "stat", stat)
    counts = snapshot.processes[pid]
    counts[2] += switches[0]
    counts[3] += switches[1]


def io_parse(snapshot: ProcSnapshot, pid: int, text: str) -> None:
    """A server process's /proc/<pid>/io into `snapshot`: its read_bytes and write_bytes."""
    for line in text.splitlines():
        if line.startswith(("read_bytes:", "write_bytes:")):
            _process_line(snapshot, pid, "io", line)


def _uptime(snapshot: ProcSnapshot, line: str) -> None:
    snapshot.uptime_s = float(line.split()[0])


def _stat(snapshot: ProcSnapshot, line: str) -> None:
    # `intr` and `softirq` carry a count per interrupt (hundreds on a big machine): only
    # the total, their first field, is read.
    name, _, rest = line.partition(" ")
    if name.startswith("cpu"):
        snapshot.cpus[name] = [int(v) for v in rest.split(None, CPU_FIELDS)[:CPU_FIELDS]]
    elif name == "ctxt":
        snapshot.ctxt = int(rest)
    elif name == "intr":
        snapshot.intr = int(rest.split(None, 1)[0])
    elif name == "procs_running":
        snapshot.procs_running = int(rest)


def _meminfo(snapshot: ProcSnapshot, line: str) -> None:
    name, _, rest = line.partition(":")
    if name in MEMINFO_KEYS:
        words = rest.split()
        if words and words[0].isdigit():
            snapshot.meminfo_kb[name] = int(words[0])


def _diskstats(snapshot: ProcSnapshot, line: str) -> None:
    # 11 fields after the name on every kernel; 4.18+ adds 4 of discards, 5.5+ 2 of
    # flushes (requests completed, ms spent flushing): kept when the kernel has them.
    words = line.split()
    if len(words) >= 14 and not SKIPPED_DISK.match(words[2]):
        snapshot.disks[words[2]] = [int(v) for v in words[3 : 20 if len(words) >= 20 else 14]]


def _net_dev(snapshot: ProcSnapshot, line: str) -> None:
    name, sep, rest = line.partition(":")
    words = rest.split()
    if sep and len(words) >= 9 and words[0].isdigit():
        snapshot.nets[name.strip()] = (int(words[0]), int(words[8]))


def _sysbench(snapshot: ProcSnapshot, line: str) -> None:
    pid, _, rest = line.partition(" ")
    fields = rest.rpartition(")")[2].split()
    if pid.isdigit() and len(fields) >= 13:
        snapshot.sysbench = [int(pid), int(fields[11]), int(fields[12])]


_READERS = {
    "/proc/uptime": _uptime,
    "/proc/stat": _stat,
    "/proc/meminfo": _meminfo,
    "/proc/diskstats": _diskstats,
    "/proc/net/dev": _net_dev,
    "sysbench": _sysbench,  # the remote loop's, on sysbench's load host
}


def _process_line(snapshot: ProcSnapshot, pid: int, kind: str, rest: str) -> None:
    if kind == "io":
        name, _, value = rest.partition(":")
        if value.strip().isdigit() and name in ("read_bytes", "write_bytes"):
            io = snapshot.process_io.setdefault(pid, [0, 0])
            io[name == "write_bytes"] = int(value)
        return
    counts = snapshot.processes.setdefault(pid, [0, 0, 0, 0])
    if kind == "stat":
        # The command name may hold spaces and parentheses: the fields follow the last ")".
        fields = rest.rpartition(")")[2].split()
        if len(fields) >= 13:
            counts[0], counts[1] = int(fields[11]), int(fields[12])  # utime, stime
        return
    name, _, value = rest.partition(":")
    if value.strip().isdigit():
        slot = 2 if name == "voluntary_ctxt_switches" else 3
        counts[slot] += int(value)


# --- rates -------------------------------------------------------------------------------


def _delta(before: int, after: int) -> int | None:
    """How much a counter grew; None when it was reset (a new device or process)."""
    if after >= before:
        return after - before
    if before < WRAP:
        return after + WRAP - before
    return None


def host_values(
    before: ProcSnapshot, after: ProcSnapshot, *, clk_tck: int = 100
) -> dict[str, Any] | None:
    """The figures of the interval between two snapshots (the HostMetrics values);
    None when no time passed between them."""
    seconds = after.uptime_s - before.uptime_s
    if seconds <= 0:
        return None
    values: dict[str, Any] = {
        "cpu": _cpu(before.cpus.get("cpu"), after.cpus.get("cpu")),
        "cores": _cores(before, after),
        "ncpu": len(after.cpus) - ("cpu" in after.cpus),
        "runq": float(after.procs_running),
        "ctxt_s": _rate(before.ctxt, after.ctxt, seconds),
        "intr_s": _rate(before.intr, after.intr, seconds),
        "disks": _disks(before.disks, after.disks, seconds),
        "nets": _nets(before.nets, after.nets, seconds),
        "mem": _memory(after.meminfo_kb),
    }
    if after.has_process:
        values["db"] = _process(before.processes, after.processes, seconds, clk_tck)
        values["db"].update(_process_io(before, after, seconds))
    if after.sysbench and values["ncpu"]:
        # In % of all cores, as the busy share: one that started within the interval
        # counts from zero (the worker names it as it starts sysbench).
        was = before.sysbench or [0, 0, 0]  # pid 0: none
        ticks = sum(after.sysbench[1:]) - (sum(was[1:]) if was[0] == after.sysbench[0] else 0)
        values["sysbench_cpu_pct"] = round(
            100 * max(0, ticks) / clk_tck / seconds / values["ncpu"], 1
        )
    return values


def _rate(before: int, after: int, seconds: float) -> float:
    grown = _delta(before, after)
    return round((grown or 0) / seconds, 1)


def _cpu(before: list[int] | None, after: list[int] | None) -> dict[str, float] | None:
    if before is None or after is None:
        return None
    deltas = [max(0, a - b) for a, b in zip(after, before, strict=False)]
    deltas += [0] * (CPU_FIELDS - len(deltas))
    total = sum(deltas)
    if total == 0:
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = deltas
    return {
        "user": round(100.0 * (user + nice) / total, 1),
        "system": round(100.0 * (system + irq + softirq) / total, 1),
        "iowait": round(100.0 * iowait / total, 1),
        "steal": round(100.0 * steal / total, 1),
        "idle": round(100.0 * idle / total, 1),
    }


def _cores(before: ProcSnapshot, after: ProcSnapshot) -> list[dict[str, float] | None]:
    """Per core in order (the kernel lists them so); a core offline in either reading
    is None."""
    was = before.cpus
    return [_cpu(was.get(name), now) for name, now in after.cpus.items() if name != "cpu"]


def _disks(
    before: Mapping[str, list[int]], after: Mapping[str, list[int]], seconds: float
) -> dict[str, dict[str, float]]:
    disks = {}
    for name, now in after.items():
        if name in before and any(now):
            figures = _disk(before[name], now, seconds)
            if figures is not None:
                disks[name] = figures
    return disks


def _disk(before: list[int], after: list[int], seconds: float) -> dict[str, float] | None:
    # reads, merged, sectors read, ms reading, writes, merged, sectors written, ms writing,
    # in flight, ms doing I/O, weighted ms
    d = [_delta(b, a) for b, a in zip(before, after, strict=False)]
    if any(d[i] is None for i in (0, 2, 3, 4, 6, 7, 9)):
        return None
    figures = _disk_rates(d, seconds)
    if len(d) >= FLUSH_FIELDS and d[15] is not None and d[16] is not None:
        # The device's own time per cache flush: a lower bound of an fsync's time (the
        # data and the file system's journal are written before it, see host-metrics.md).
        figures["flush_s"] = round(d[15] / seconds, 1)
        figures["flush_ms"] = round(d[16] / d[15], 4) if d[15] else 0.0
    return figures


def _disk_rates(d: list[int | None], seconds: float) -> dict[str, float]:
    figures = [d[i] or 0 for i in (0, 2, 3, 4, 6, 7, 9)]
    reads, sectors_r, ms_r, writes, sectors_w, ms_w, busy = figures
    ios = reads + writes
    return {
        "r_iops": round(reads / seconds, 1),
        "w_iops": round(writes / seconds, 1),
        "r_mbs": round(sectors_r * SECTOR_BYTES / seconds / 1e6, 3),
        "w_mbs": round(sectors_w * SECTOR_BYTES / seconds / 1e6, 3),
        "await_ms": round((ms_r + ms_w) / ios, 3) if ios else 0.0,
        "util_pct": round(min(100.0, 100.0 * busy / (seconds * 1000)), 1),
    }


def _nets(
    before: Mapping[str, tuple[int, int]], after: Mapping[str, tuple[int, int]], seconds: float
) -> dict[str, dict[str, float]]:
    """Every interface that has carried anything (lo too: a target on this machine is
    reached through it)."""
    nets = {}
    for name, (rx, tx) in after.items():
        if name not in before or not (rx or tx):
            continue
        grown_rx, grown_tx = _delta(before[name][0], rx), _delta(before[name][1], tx)
        if grown_rx is None or grown_tx is None:
            continue
        nets[name] = {
            "rx_kbs": round(grown_rx / seconds / 1000, 2),
            "tx_kbs": round(grown_tx / seconds / 1000, 2),
        }
    return nets


def _memory(kb: Mapping[str, int]) -> dict[str, float]:
    get = kb.get
    cached = round((get("Cached", 0) + get("Buffers", 0) + get("SReclaimable", 0)) / 1024, 1)
    return {
        "used_mb": round(
            round(get("MemTotal", 0) / 1024, 1) - round(get("MemFree", 0) / 1024, 1) - cached, 1
        ),
        "cached_mb": cached,
        "dirty_mb": round(get("Dirty", 0) / 1024, 1),
        "writeback_mb": round(get("Writeback", 0) / 1024, 1),
    }


def _process(
    before: Mapping[int, list[int]],
    after: Mapping[int, list[int]],
    seconds: float,
    clk_tck: int,
) -> dict[str, float]:
    """The database server's processes summed: a process new in this interval counts
    from zero (it started within it), one gone counts no more."""
    totals = [0, 0, 0, 0]
    for pid, now in after.items():
        was = before.get(pid, [0, 0, 0, 0])
        for i in range(4):
            totals[i] += max(0, now[i] - was[i])
    return {
        "user_cores": round(totals[0] / clk_tck / seconds, 3),
        "system_cores": round(totals[1] / clk_tck / seconds, 3),
        "vcsw_s": round(totals[2] / seconds, 1),
        "nvcsw_s": round(totals[3] / seconds, 1),
    }


def _process_io(before: ProcSnapshot, after: ProcSnapshot, seconds: float) -> dict[str, Any]:
    """What the server's own processes had the disks read and write, KB/s (1000 bytes, as
    the disks' MB/s): a neighbour's I/O is not in it. Every process's /proc/<pid>/io or no
    figure (a part would read as a server that wrote less); why not, when it was said."""
    if after.io_problem or not after.process_io:
        return {"io_why": after.io_problem} if after.io_problem else {}
    if not after.processes.keys() <= after.process_io.keys():
        return {"io_why": "/proc/<pid>/io was not read for every server process"}
    grown = [0, 0]
    for pid, now in after.process_io.items():
        was = before.process_io.get(pid, [0, 0])
        for i in (0, 1):
            grown[i] += max(0, now[i] - was[i])
    return {
        "read_kbs": round(grown[0] / seconds / 1000, 2),
        "write_kbs": round(grown[1] / seconds / 1000, 2),
    }


def busy_pct(values: Mapping[str, Any]) -> float | None:
    """The share of all cores doing anything: 100 - idle - iowait (iowait is idle
    time with I/O pending, not work)."""
    cpu = values.get("cpu")
    if not cpu:
        return None
    return round(100.0 - cpu["idle"] - cpu["iowait"], 1)


def intervals(snapshots: Iterable[ProcSnapshot], clk_tck: int = 100) -> list[dict[str, Any]]:
    """The values of each interval between consecutive snapshots."""
    out: list[dict[str, Any]] = []
    previous: ProcSnapshot | None = None
    for snapshot in snapshots:
        if previous is not None:
            values = host_values(previous, snapshot, clk_tck=clk_tck)
            if values is not None:
                out.append(values)
        previous = snapshot
    return out
