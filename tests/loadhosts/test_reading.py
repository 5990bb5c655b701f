"""Reading sysbench's output blocks on the pipe or the SSH channel until a line comes:
a worker following a quiet benchmark does not wake up in between. And sysbench's private
directory, which a dead worker leaves behind, is removed on request."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.loadhosts import ExecutorError, LocalExecutor, executor_for
from runs.sysbench.command import SysbenchCommand

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

CPU_RUN = ["cpu", "--time=3", "--report-interval=1", "--cpu-max-prime=2000", "run"]


def cpu(config_path: str) -> SysbenchCommand:
    return SysbenchCommand(
        argv=["sysbench", f"--config-file={config_path}", *CPU_RUN], config_text=""
    )


def cpu_until_killed(config_path: str) -> SysbenchCommand:
    """A run that outlasts the test's SSH round trips however loaded the machine (a 3 s
    one ended, and its wrapper removed its directory, before a loaded whole run asked)."""
    argv = ["sysbench", f"--config-file={config_path}", "cpu", "--time=300", "run"]
    return SysbenchCommand(argv=argv, config_text="")


def read_all(process) -> list[list[str]]:
    reads = []
    while (lines := process.read(30.0)) is not None:
        reads.append(lines)
    return reads


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_a_read_returns_when_sysbench_prints_and_never_empty_handed(where, request):
    executor = (
        LocalExecutor() if where == "local" else executor_for(request.getfixturevalue("ssh_host"))
    )
    process = executor.start(cpu)

    reads = read_all(process)

    assert process.wait() == 0
    # 30 s to wait at each read: each came back with output, but for a pipe that closed
    # or a line that came in two pieces.
    assert sum(1 for lines in reads if not lines) <= 3
    interval_lines = [line for lines in reads for line in lines if line.startswith("[ ")]
    assert len(interval_lines) >= 2
    assert len(reads) >= 4  # a line a second arrives as it is printed, not at the end


def test_the_private_directory_of_a_dead_worker_is_removed_locally(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    executor = LocalExecutor()
    process = executor.start(cpu)
    config_dir = Path(process.config_dir)
    assert config_dir.parent == tmp_path and (config_dir / "sysbench.cfg").exists()
    process.kill()
    # The worker died before it waited for sysbench: its directory is still there.
    assert executor.remove_config_dir(str(config_dir)) is True
    assert not config_dir.exists()
    assert executor.remove_config_dir(str(config_dir)) is False
    with pytest.raises(ExecutorError):
        executor.remove_config_dir(str(tmp_path))  # not one of sysbench's
    process.wait()


def test_the_private_directory_on_an_ssh_load_host_is_removed_on_request(
    ssh_host, sshd_server, ssh_key_file
):
    executor = executor_for(ssh_host)
    process = executor.start(cpu_until_killed)
    directory = process.config_dir
    assert sshd_server.ssh(ssh_key_file, f"test -f {directory}/pgid && echo here") == "here\n"

    assert executor.remove_config_dir(directory) is True

    assert sshd_server.ssh(ssh_key_file, f"test -e {directory} || echo gone") == "gone\n"
    with pytest.raises(ExecutorError):
        executor.remove_config_dir("/etc")
    process.kill()
    process.wait()
