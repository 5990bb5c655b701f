"""strace on a private server's process: the independent measurement of its fsyncs, for
the tests and the benchmarks that check benchdash's fsync figures against it.

`strace -f -T -y -e trace=fsync,fdatasync -p PID` follows every thread (and, for
PostgreSQL's postmaster, every backend it forks), times each call (-T) and names the file
of each descriptor (-y), so the syncs are sorted by file without reading /proc/PID/fd,
where a backend that has ended no longer is.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections import defaultdict
from pathlib import Path

CALL = re.compile(r"^(\d+)\s+(?:fsync|fdatasync)\(\d+<([^>]*)>(.*)$")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (?:fsync|fdatasync) resumed>.*<([\d.]+)>\s*$")
TIMED = re.compile(r"<([\d.]+)>\s*$")


class Strace:
    """strace attached to `pid` while in the `with` block; `.syncs()` after it: the ms of
    each fsync or fdatasync, by the path of its file."""

    def __init__(self, pid: int, out: Path) -> None:
        self.pid = pid
        self.out = out
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Strace:
        argv = ["strace", "-f", "-T", "-y", "-e", "trace=fsync,fdatasync", "-p", str(self.pid)]
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
