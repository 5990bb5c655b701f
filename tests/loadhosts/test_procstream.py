"""The host metrics' sampler: the remote loop over the private sshd (this machine as an SSH
host) and the local reader see the same machine, so they must give the same figures;
the remote loop ends with its connection; a pid file that names nothing is said."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from runs.analysis.host_metrics.procfs import ProcSnapshot, host_values
from runs.loadhosts import ssh
from runs.loadhosts.procstream import MARKER, LocalProcStream, ProcStream, SSHProcStream
from tests.servers import PrivateSSHD, SSHKey

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]


@pytest.fixture
def host(sshd_server: PrivateSSHD, ssh_key: SSHKey) -> ssh.SSHHost:
    return ssh.SSHHost(
        name="this-machine", address=sshd_server.host, port=sshd_server.port,
        user=sshd_server.user, private_key=ssh_key.private, host_key=sshd_server.host_key.public,
    )  # fmt: skip


@pytest.fixture
def pid_file(tmp_path: Path) -> str:
    """This test process as the 'database server': a process with threads."""
    path = tmp_path / "server.pid"
    path.write_text(f"{os.getpid()}\n")
    return str(path)


def two_snapshots(stream: ProcStream) -> list[ProcSnapshot]:
    taken: list[ProcSnapshot] = []
    deadline = time.monotonic() + 10
    while len(taken) < 2 and time.monotonic() < deadline:
        taken += [snapshot for _, snapshot in stream.take()]
        time.sleep(0.2)
    assert len(taken) >= 2, stream.problem
    return taken[-2:]


def test_the_ssh_stream_and_the_local_reader_give_the_same_figures(host, pid_file):
    worker = threading.Thread(target=time.sleep, args=(30,), daemon=True)
    worker.start()  # a second thread of the "server", to be summed
    remote = SSHProcStream(host, pid_file)
    local = LocalProcStream("local", pid_file)
    try:
        (r1, r2), (l1, l2) = two_snapshots(remote), two_snapshots(local)
    finally:
        remote.close()
        local.close()
    assert remote.problem == local.problem == ""
    assert remote.pid == local.pid == os.getpid()
    assert remote.clk_tck == local.clk_tck
    # The remote loop sends only what is read: the same counters come out.
    assert set(r2.cpus) == set(l2.cpus) and r2.intr > 0 and r2.ctxt > 0
    assert set(r2.meminfo_kb) == set(l2.meminfo_kb) == {
        "MemTotal", "MemFree", "Buffers", "Cached", "SReclaimable", "Dirty", "Writeback",
    }  # fmt: skip
    assert os.getpid() in r2.processes and os.getpid() in l2.processes
    remote_values = host_values(r1, r2, clk_tck=remote.clk_tck)
    local_values = host_values(l1, l2, clk_tck=local.clk_tck)
    assert remote_values is not None and local_values is not None
    assert set(remote_values) == set(local_values)
    assert len(remote_values["cores"]) == len(local_values["cores"]) == os.cpu_count()
    # Disks and interfaces that moved since boot on one side moved on the other.
    assert set(remote_values["disks"]) == set(local_values["disks"])
    assert set(remote_values["nets"]) == set(local_values["nets"])
    assert remote_values["mem"]["used_mb"] > 0 and "db" in remote_values
    # The server's figures on both sides: its CPU ticks (the process's, its threads gone
    # included) only grow from one second to the next; its threads' switches are summed.
    for first, second in ((r1, r2), (l1, l2)):
        (utime, stime, switches, _), (utime_after, stime_after, _, _) = (
            first.processes[os.getpid()],
            second.processes[os.getpid()],
        )
        assert utime <= utime_after and stime <= stime_after and switches > 0


def loops_of(pid_file: str) -> list[int]:
    """The remote loops started with this pid file (its path is in their command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if MARKER.encode() in cmdline and pid_file.encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_the_remote_loop_ends_with_its_connection(host, pid_file):
    remote = SSHProcStream(host, pid_file)
    two_snapshots(remote)
    assert loops_of(pid_file)
    remote.close()
    deadline = time.monotonic() + 10
    while loops_of(pid_file) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert loops_of(pid_file) == []


def test_a_pid_file_that_names_nothing_is_said_and_the_machine_still_sampled(host, tmp_path):
    missing = tmp_path / "gone.pid"
    missing.write_text("999999999\n")
    remote = SSHProcStream(host, str(missing))
    try:
        snapshots = two_snapshots(remote)
    finally:
        remote.close()
    assert remote.pid is None
    assert f"cannot read the server's process id from {missing}" in remote.problem
    assert snapshots[-1].processes == {}


def test_sysbench_s_own_cpu_is_read_over_its_threads_and_stops_when_it_ends():
    """A real sysbench (cpu, two threads) named to the local stream as it starts: each
    second carries its own CPU, over all its threads (the process's stat), in % of all
    cores, as the busy share; once it has ended and been reaped, no figure."""
    stream = LocalProcStream("local", period_s=0.5)
    sysbench = subprocess.Popen(
        ["sysbench", "cpu", "--threads=2", "--time=2", "run"], stdout=subprocess.DEVNULL
    )
    try:
        stream.watch_sysbench(sysbench.pid)
        time.sleep(1.0)
        stream.poll()
        time.sleep(0.6)
        stream.poll()
    finally:
        sysbench.wait()
    time.sleep(0.6)
    stream.poll()
    stream.close()
    snapshots = [s for _, s in stream.take(every=True)]
    running = host_values(snapshots[-3], snapshots[-2], clk_tck=stream.clk_tck)
    gone = host_values(snapshots[-2], snapshots[-1], clk_tck=stream.clk_tck)
    assert running is not None and gone is not None
    assert snapshots[-2].sysbench is not None and snapshots[-2].sysbench[0] == sysbench.pid
    # Two busy threads on a shared machine: some CPU, no more than the machine's.
    assert 0 < running["sysbench_cpu_pct"] <= 100.0
    assert snapshots[-1].sysbench is None and "sysbench_cpu_pct" not in gone


def private_dirs_of(loops: list[int]) -> list[Path]:
    """The remote loops' private directories (each holds its loop's pid as `pgid`)."""
    found = []
    for directory in Path("/tmp").glob("benchdash.??????????"):
        try:
            pgid = (directory / "pgid").read_text().strip()
        except OSError:
            continue
        if pgid.isdigit() and int(pgid) in loops:
            found.append(directory)
    return found


def test_the_ssh_loop_reads_sysbench_s_own_cpu_once_told_its_process_on_stdin(host, pid_file):
    """The remote loop starts before sysbench, as in a cell, and is told its process on
    its stdin as it starts: each second from then carries sysbench's own CPU, > 0 while it
    runs, none once it ended. The loop's private directory holds the number only until
    it is read; the loop and its reader end with the connection. Before the loop was
    told (issue 49), an SSH load host's seconds had no sysbench figure at all."""
    remote = SSHProcStream(host, pid_file, load=True)
    try:
        two_snapshots(remote)  # the busy start, before sysbench
        loops = loops_of(pid_file)
        assert private_dirs_of(loops), "no private directory while the loop waits"
        sysbench = subprocess.Popen(
            ["sysbench", "cpu", "--threads=1", "--time=3", "run"], stdout=subprocess.DEVNULL
        )
        try:
            remote.watch_sysbench(sysbench.pid)
        finally:
            sysbench.wait()
        # Three more seconds: the last one read after sysbench was reaped.
        arrived = remote.arrived()
        deadline = time.monotonic() + 10
        while remote.arrived() < arrived + 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        snapshots = [s for _, s in remote.take(every=True)]
        assert private_dirs_of(loops) == []
    finally:
        remote.close()
    named = [i for i, s in enumerate(snapshots) if s.sysbench is not None]
    assert len(named) >= 2, [s.sysbench for s in snapshots]
    assert {s.sysbench[0] for s in snapshots if s.sysbench} == {sysbench.pid}
    figures = [
        host_values(snapshots[i - 1], snapshots[i], clk_tck=remote.clk_tck) for i in named[1:]
    ]
    # One busy thread: some CPU each second, no more than the machine's.
    pcts = [v["sysbench_cpu_pct"] for v in figures if v is not None]
    assert len(pcts) == len(named) - 1 and all(0 < p <= 100.0 for p in pcts), pcts
    assert snapshots[-1].sysbench is None  # gone: no figure
    deadline = time.monotonic() + 10
    while loops_of(pid_file) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert loops_of(pid_file) == []
