"""The host metrics' own cost (bench/overhead.py --telemetry): on the worker, the CPU of
its process while a sampler streams a machine over SSH (a private sshd on loopback, as
the tests use) and reads this machine's /proc, taking and encoding the rows every second
as the sink does; on the sampled host, the CPU of the remote shell loop (with the awk,
cat and sleep it waits for) and of the sshd session that carries it.

Each figure is CPU-seconds per second of sampling, in milliseconds (ms/s); 10 ms/s is
1 % of one core.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _ticks(pid: int, children: bool) -> float:
    """A process's CPU seconds (and its waited-for children's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    used = int(fields[11]) + int(fields[12])
    if children:
        used += int(fields[13]) + int(fields[14])
    return used / CLK_TCK


def _parent(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(x for x in status.splitlines() if x.startswith("PPid:")).split()[1])


def _loop_pids(sshd_pid: int) -> tuple[int, int]:
    """The remote loop's shell and the sshd process that started it: the loop under this
    measurement's own sshd (another one on the machine, a test's, is not counted)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            if b"@@benchdash-snapshot" not in cmdline or not cmdline.startswith(b"sh\0"):
                continue
            session = ancestor = _parent(int(entry.name))
            while ancestor not in (0, 1, sshd_pid):
                ancestor = _parent(ancestor)
        except (OSError, StopIteration):
            continue
        if ancestor == sshd_pid:
            return int(entry.name), session
    raise RuntimeError("the remote sampling loop is not running")


def _sample(streams: list[Any], seconds: int) -> tuple[float, float, int]:
    """Take, parse and encode every second as the sink does: (CPU s, wall s, rows)."""
    from runs.analysis.host_metrics.procfs import host_values

    cpu0, wall0 = time.process_time(), time.monotonic()
    rows = 0
    last: dict[int, Any] = {}
    while time.monotonic() - wall0 < seconds:
        time.sleep(1.0)
        for i, stream in enumerate(streams):
            for _, snapshot in stream.take():
                if i in last and (values := host_values(last[i], snapshot)) is not None:
                    json.dumps(values)  # as the heartbeat statement and the live event
                    rows += 1
                last[i] = snapshot
    return time.process_time() - cpu0, time.monotonic() - wall0, rows


def measure_once(seconds: int) -> dict[str, Any]:
    """One SSH stream of this machine for `seconds`, then the local reader as long."""
    from runs.loadhosts import ssh
    from runs.loadhosts.procstream import LocalProcStream, SSHProcStream
    from tests.servers import PrivateSSHD, SSHKey

    server = PrivateSSHD().start()
    try:
        key = SSHKey.generate()
        server.authorize(key)
        host = ssh.SSHHost(
            name="bench", address=server.host, port=server.port, user=server.user,
            private_key=key.private, host_key=server.host_key.public,
        )  # fmt: skip
        remote = SSHProcStream(host)
        time.sleep(1.5)
        assert server._process is not None
        shell, session = _loop_pids(server._process.pid)
        host0 = _ticks(shell, children=True) + _ticks(session, children=False)
        cpu, wall, rows = _sample([remote], seconds)
        sampled = (_ticks(shell, children=True) + _ticks(session, children=False) - host0) / wall
        remote.close()
        local = LocalProcStream("local")
        local_cpu, local_wall, local_rows = _sample([local], seconds)
        local.close()
    finally:
        server.stop()
    return {
        "seconds": round(wall, 1),
        "rows": rows + local_rows,
        "worker_ssh_ms_per_s": round(1000 * cpu / wall, 3),
        "worker_local_ms_per_s": round(1000 * local_cpu / local_wall, 3),
        "sampled_host_ms_per_s": round(1000 * sampled, 3),
        "sampled_host_pct_of_a_core": round(100 * sampled, 3),
    }
