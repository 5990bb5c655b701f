"""strace on a private server's process: the independent measurement of its fsyncs, for
the tests and the benchmarks that check benchdash's fsync figures against it; and one
measured run with every other source beside it (`measured_run`).

`strace -f -T -y -e trace=fsync,fdatasync -p PID` follows every thread (and, for
PostgreSQL's postmaster, every backend it forks), times each call (-T) and names the file
of each descriptor (-y), so the syncs are sorted by file without reading /proc/PID/fd,
where a backend that has ended no longer is.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runs import targets
from runs.analysis.host_metrics import procfs
from runs.analysis.host_metrics.sync_probe import probe_summary
from runs.analysis.why.fsyncs import HostSync, host_sync
from runs.columns import RunCounters
from runs.loadhosts.sync_probe import LocalSyncProbe
from runs.sysbench.command import Connection
from runs.targets.counters import counters_summary, settled_counters
from runs.targets.sync_probe import sync_site

CALL = re.compile(r"^(\d+)\s+(?:fsync|fdatasync)\(\d+<([^>]*)>(.*)$")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (?:fsync|fdatasync) resumed>.*<([\d.]+)>\s*$")
TIMED = re.compile(r"<([\d.]+)>\s*$")
PROBE_EVERY_S = 0.2  # the product's default (BENCHDASH_SYNC_PROBE_S)


class Strace:
    """strace attached to `pid` while in the `with` block; `.syncs()` after it: the ms of
    each fsync or fdatasync, by the path of its file."""

    def __init__(self, pid: int, out: Path) -> None:
        self.pid = pid
        self.out = out
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Strace:
        # The process and its children already there (PostgreSQL's WAL writer, whose syncs
        # pg_stat_wal counts too), and with -f every one forked after (a backend).
        tasks = [self.pid, *children(self.pid)]
        argv = ["strace", "-f", "-T", "-y", "-e", "trace=fsync,fdatasync"]
        argv += [word for task in tasks for word in ("-p", str(task))]
        self._process = subprocess.Popen(
            [*argv, "-o", str(self.out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(1.0)  # attached to every thread
        return self

    def __exit__(self, *_: object) -> None:
        assert self._process is not None
        self._process.terminate()
        self._process.wait(timeout=30)

    def syncs(self) -> dict[str, list[float]]:
        return syncs_by_file(self.out.read_text())


def children(pid: int) -> list[int]:
    found = []
    for path in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(c) for c in path.read_text().split()]
        except OSError:
            continue  # a thread gone meanwhile
    return found


def syncs_by_file(text: str) -> dict[str, list[float]]:
    """The syncs of an strace -f -T -y output, in ms by file path; a call split by
    another thread's (`<unfinished ...>`, `<... fdatasync resumed>`) counts once."""
    found: dict[str, list[float]] = defaultdict(list)
    pending: dict[str, str] = {}
    for line in text.splitlines():
        if match := CALL.match(line):
            pid, path, rest = match.groups()
            if "<unfinished ...>" in rest:
                pending[pid] = path
            elif timed := TIMED.search(rest):
                found[path].append(float(timed.group(1)) * 1000)
        elif (resumed := RESUMED.match(line)) and resumed.group(1) in pending:
            found[pending.pop(resumed.group(1))].append(float(resumed.group(2)) * 1000)
    return dict(found)


def of_files(syncs: dict[str, list[float]], *names: str) -> list[float]:
    """The syncs of the files whose path contains one of `names` (ib_logfile, pg_wal/)."""
    return [ms for path, times in syncs.items() if any(n in path for n in names) for ms in times]


# --- one measured run: strace, the server's counters, the device, the sync probe ---------


@dataclass
class MeasuredRun:
    """A run of sysbench with every source of an fsync's time beside it."""

    transactions: int
    seconds: float
    latency_ms: float
    counters: RunCounters
    probe: dict[str, Any]  # runs/analysis/host_metrics/sync_probe.py's summary
    syncs: dict[str, list[float]]  # strace's, ms by file
    diskstats_ms: float | None  # the device's ms per cache flush
    runnable: float  # tasks running or ready to run, on average, beside the cores
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)

    def host(self) -> HostSync | None:
        """The server host's time per fsync, as the product takes it."""
        return host_sync({"hosts": [{"role": "server", "sync_probe": self.probe}]})

    @property
    def oversubscribed(self) -> bool:
        """More tasks wanted a CPU than there are cores, on average: a thread woken from
        its fsync waits for one, longer the more it ran before (the server's do)."""
        return self.runnable > self.cores


def measured_run(
    connection: Connection, pid: int, sysbench: list[str], *, seconds: int, rate: int, out: Path
) -> MeasuredRun:
    """sysbench `run` for `seconds` (at `rate` transactions a second, 0: unlimited) with
    strace on `pid`, the server's counters before and after, /proc/diskstats, the sync
    probe as the worker runs it (every 0.2 s) and the machine's run queue."""
    with targets.connect(connection) as db:
        site, problem = sync_site(db)
        assert site is not None, problem
        limit = [f"--rate={rate}"] if rate else []
        with Strace(pid, out) as tracer:
            probe = LocalSyncProbe("local", site, PROBE_EVERY_S)
            queue = RunQueue()
            before, disks, started = db.status_counters(), _diskstats(), time.monotonic()
            done = subprocess.run(
                [*sysbench, "--threads=1", f"--time={seconds}", *limit, "run"],
                capture_output=True, text=True, timeout=seconds + 120, check=True,
            )  # fmt: skip
            ended = time.monotonic()
            after, disks_after = settled_counters(db, [(0.0, before)]), _diskstats()
            probe.close()
            runnable = queue.stop()
    transactions = int(_found(r"transactions:\s+(\d+)", done.stdout))
    readings = [(0.0, before), (ended - started, after)]
    executing = _found(r"execution time \(avg/stddev\):\s+([\d.]+)", done.stdout)
    report = {
        "sql": {"transactions": transactions},
        "general": {"total_time_s": _found(r"total time:\s+([\d.]+)s", done.stdout)},
        "fairness": {"exec_time_avg": executing},
    }
    summary = counters_summary(readings, [report])
    return MeasuredRun(
        transactions=transactions,
        seconds=ended - started,
        latency_ms=_found(r"avg:\s+([\d.]+)", done.stdout),
        counters=RunCounters.load(summary),
        probe=probe_summary(
            probe.lines, offset=probe.offset, start=started, end=ended, every_s=PROBE_EVERY_S
        ),
        syncs=tracer.syncs(),
        diskstats_ms=_flush_ms(disks, disks_after),
        runnable=runnable,
    )


class RunQueue:
    """The tasks running or ready to run (/proc/loadavg's fourth field, less this
    reader), sampled every 0.1 s by a thread until stopped: their mean."""

    def __init__(self) -> None:
        self._seen: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            running = Path("/proc/loadavg").read_text().split()[3].split("/")[0]
            self._seen.append(int(running) - 1)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(self._seen) / len(self._seen) if self._seen else 0.0


def _found(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, f"no {pattern} in sysbench's output:\n{text}"
    return float(match.group(1))


def _diskstats() -> procfs.ProcSnapshot:
    snapshot = procfs.ProcSnapshot(uptime_s=float(Path("/proc/uptime").read_text().split()[0]))
    for line in Path("/proc/diskstats").read_text().splitlines():
        procfs._diskstats(snapshot, line)
    return snapshot


def _flush_ms(before: procfs.ProcSnapshot, after: procfs.ProcSnapshot) -> float | None:
    disks = (procfs.host_values(before, after) or {}).get("disks", {})
    flushes = [(d["flush_s"], d["flush_ms"]) for d in disks.values() if d.get("flush_s")]
    count = sum(n for n, _ in flushes)
    return round(sum(n * ms for n, ms in flushes) / count, 4) if count else None
