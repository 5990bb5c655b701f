"""The database server's /proc/<pid>/io refused (issue 48): a process of another user's,
as the shared MariaDB running as mysql, read by a sampler that may not trace it. The
kernel says EACCES; the local reader and the SSH loop say why, give no I/O figure, and
still sample the rest. The tests run as root: the refusal is made real by a process of
`nobody`'s read without capabilities (setpriv), locally and behind the private sshd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.analysis.host_metrics.procfs import host_values
from runs.loadhosts import ssh
from runs.loadhosts.procstream import SSHProcStream
from tests.loadhosts.test_procstream import two_snapshots

pytestmark = [
    pytest.mark.slow,
    # a Python with Django to start under setpriv: 30 s was cut once in a loaded whole run
    pytest.mark.timeout(300),
    pytest.mark.skipif(os.geteuid() != 0, reason="makes another user's process: root only"),
]

WITHOUT_CAPABILITIES = ["setpriv", "--bounding-set=-all", "--inh-caps=-all"]
# The local reader in a process without capabilities: two snapshots, their figures.
READER = """
import json, sys, time, django
django.setup()
from runs.analysis.host_metrics.procfs import host_values
from runs.loadhosts.procfiles import ProcFiles, local_snapshot
files = ProcFiles()
first = local_snapshot(int(sys.argv[1]), files)
time.sleep(0.3)
second = local_snapshot(int(sys.argv[1]), files)
print(json.dumps({"problem": second.io_problem, "io": bool(second.process_io),
                  "db": host_values(first, second)["db"]}))
"""


@pytest.fixture
def others_process(tmp_path: Path) -> Iterator[tuple[int, str]]:
    """A process of nobody's, and a pid file naming it."""
    process = subprocess.Popen(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "sleep", "60"]
    )
    pid_file = tmp_path / "server.pid"
    pid_file.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + 5
    while Path(f"/proc/{process.pid}/io").stat().st_uid == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # setpriv has not changed its user yet
    yield process.pid, str(pid_file)
    process.kill()
    process.wait()


def test_the_local_reader_says_why_and_gives_no_io_figure(others_process):
    pid, _ = others_process
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [*WITHOUT_CAPABILITIES, sys.executable, "-c", READER, str(pid)],
        capture_output=True, text=True, timeout=120, env=env, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    read = json.loads(result.stdout)
    assert read["problem"] == f"cannot read /proc/{pid}/io: Permission denied"
    assert read["io"] is False
    assert read["db"]["io_why"] == read["problem"]
    assert "write_kbs" not in read["db"] and "vcsw_s" in read["db"]  # the rest still read


def test_the_ssh_loop_says_why_and_gives_no_io_figure(others_process, make_ssh_host):
    pid, pid_file = others_process
    without = " ".join(WITHOUT_CAPABILITIES)
    host = make_ssh_host("db-host", command=f'{without} sh -c "$SSH_ORIGINAL_COMMAND"')
    stream = SSHProcStream(ssh.SSHHost.from_load_host(host), pid_file)
    try:
        before, after = two_snapshots(stream)
    finally:
        stream.close()
    assert stream.problem == "" and stream.pid == pid
    assert stream.io_problem == f"cannot read /proc/{pid}/io: Permission denied"
    assert after.process_io == {} and pid in after.processes
    values = host_values(before, after, clk_tck=stream.clk_tck)
    assert values is not None and values["db"]["io_why"] == stream.io_problem


def test_the_ssh_loop_reads_a_servers_io_it_may_read(host_io_pid_file):
    """This test process as the server, its own written bytes read over SSH as they are
    read here: the storage layer's, not what it passed to write() (wchar)."""
    stream, pid = host_io_pid_file
    before, after = two_snapshots(stream)
    assert stream.io_problem == ""
    here = {k: int(v) for k, v in (line.split(": ") for line in
            Path(f"/proc/{pid}/io").read_text().splitlines())}  # fmt: skip
    assert pid in after.process_io and set(after.process_io) <= set(after.processes)
    _, write_bytes = after.process_io[pid]
    assert before.process_io[pid][1] <= write_bytes <= here["write_bytes"]
    assert write_bytes >= 1 << 20  # the megabyte it wrote and synced


@pytest.fixture
def host_io_pid_file(tmp_path, make_ssh_host) -> Iterator[tuple[SSHProcStream, int]]:
    written = tmp_path / "written.bin"
    with open(written, "wb") as f:  # this process's own storage writes, so many bytes
        f.write(os.urandom(1 << 20))
        f.flush()
        os.fsync(f.fileno())
    pid_file = tmp_path / "server.pid"
    pid_file.write_text(f"{os.getpid()}\n")
    stream = SSHProcStream(ssh.SSHHost.from_load_host(make_ssh_host("db-host")), str(pid_file))
    yield stream, os.getpid()
    stream.close()
