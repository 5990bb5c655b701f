"""SSH load hosts against a real OpenSSH sshd: pinned host keys, the remote wrapper, facts,
and killing a remote process group. The tests check the load host with the OpenSSH
client (sshd_server.ssh), independently of benchdash's own SSH code."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runs.loadhosts import (
    CommandFactory,
    ExecutorError,
    SSHExecutor,
    executor_for,
    ssh,
)
from runs.loadhosts.facts import host_facts
from runs.models import LoadHost
from runs.sysbench.command import SysbenchCommand
from tests.servers import SSHKey

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

# Prints the option --note as sysbench received it: one argument, or not.
ECHO_LUA = """\
sysbench.cmdline.options = { note = {"a note", ""} }
function event()
  print("note=[" .. sysbench.opt.note .. "]")
end
"""
# Prints the open-file limits sysbench runs with.
LIMITS_LUA = """\
function event()
  for line in io.lines("/proc/self/limits") do
    if line:find("Max open files") then print(line) end
  end
end
"""


def command(*args: str) -> CommandFactory:
    """A make_command for the executor: sysbench with these arguments, no config."""

    def make(config_path: str) -> SysbenchCommand:
        return SysbenchCommand(
            argv=["sysbench", f"--config-file={config_path}", *args], config_text=""
        )

    return make


def collect(process) -> list[str]:
    return [line for line in process.lines(0.25) if line is not None]


def fingerprint_by_openssh(public_key: str, tmp_path: Path) -> str:
    path = tmp_path / "key.pub"
    path.write_text(public_key + "\n")
    out = subprocess.run(
        ["ssh-keygen", "-l", "-f", str(path)], capture_output=True, text=True, check=True
    )
    return out.stdout.split()[1]


# --- host keys ---------------------------------------------------------------------------


def test_a_host_whose_key_was_not_confirmed_is_refused(make_ssh_host, sshd_server, tmp_path):
    host = make_ssh_host("loadhost-new", host_key="")

    with pytest.raises(ExecutorError) as refused:
        executor_for(host).facts()

    shown = fingerprint_by_openssh(sshd_server.host_key.public, tmp_path)
    assert f"the host key of loadhost-new is not confirmed yet: it presents {shown}" in str(
        refused.value
    )


def test_a_changed_host_key_is_refused_plainly(make_ssh_host, sshd_server, tmp_path):
    old_key = SSHKey.generate().public  # what was pinned before a "reinstall"
    host = make_ssh_host("loadhost-1", host_key=old_key)

    with pytest.raises(ExecutorError) as refused:
        executor_for(host).facts()

    expected = fingerprint_by_openssh(old_key, tmp_path)
    got = fingerprint_by_openssh(sshd_server.host_key.public, tmp_path)
    assert str(refused.value) == (
        f"the host key of loadhost-1 changed: expected {expected}, got {got}; "
        "if the host was reinstalled, confirm the new key"
    )


def test_a_key_the_host_does_not_accept_is_refused(make_ssh_host):
    host = make_ssh_host("loadhost-1")
    host.private_key = SSHKey.generate().private  # never authorized

    with pytest.raises(ExecutorError, match="loadhost-1 refused the key"):
        executor_for(host).facts()


def test_an_unreachable_port_says_where(make_ssh_host, free_port):
    host = make_ssh_host("loadhost-1", port=free_port)

    with pytest.raises(ExecutorError) as refused:
        executor_for(host).facts()

    assert f"cannot reach loadhost-1 at 127.0.0.1:{free_port}: connection refused" in str(
        refused.value
    )


def test_a_port_that_does_not_speak_ssh_times_out(make_ssh_host):
    with socket.socket() as silent:  # accepts connections (the kernel does), says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        host = make_ssh_host("loadhost-1", port=silent.getsockname()[1])
        executor = SSHExecutor(ssh.SSHHost.from_load_host(host, timeout=1))

        with pytest.raises(ExecutorError, match=r"no SSH handshake with loadhost-1 .* within 1 s"):
            executor.facts()


def test_a_command_that_does_not_end_times_out(ssh_host):
    host = ssh.SSHHost.from_load_host(ssh_host, timeout=1)
    transport = ssh.connect(host)
    try:
        with pytest.raises(ssh.SSHError, match="did not finish within 1 s"):
            ssh.run(host, transport, "sleep 5")
    finally:
        transport.close()


# --- facts ----------------------------------------------------------------------------------


def test_facts_describe_the_host(ssh_host):
    facts: dict[str, Any] = host_facts(load_host=ssh_host)

    local = executor_for(LoadHost(name="local", kind="local")).facts()  # the same machine
    assert facts["host"] == "loadhost-1"
    for same in ("hostname", "os", "kernel", "cpu_cores", "memory_bytes", "sysbench_version"):
        assert facts[same] == local[same], same
    assert facts["cpu_model"]
    assert facts["ulimit_nofile"]["hard"] >= facts["ulimit_nofile"]["soft"] > 0
    assert len(facts["load_average"]) == 3
    assert all({"name", "bytes", "rotational"} <= set(disk) for disk in facts["disks"])
    assert facts["work_free_bytes"] > 0
    # How it is tuned, read there by the same script: the same machine says the same.
    assert facts["cpu_governor"] == local["cpu_governor"]
    cards = [str(f["network"]).partition(", IRQs")[0] for f in (facts, local)]
    assert cards[0] == cards[1]


# --- the wrapper ------------------------------------------------------------------------------


def test_lines_arrive_while_sysbench_runs_and_its_group_id_is_the_remote_one(
    ssh_host, sshd_server, ssh_key_file
):
    # 10 s: the look at its leader, an SSH connection of its own, came after a 3 s run had
    # ended in a loaded whole run
    cpu_10s = command("cpu", "--time=10", "--report-interval=1", "run")
    process = executor_for(ssh_host).start(cpu_10s)
    lines = []
    leader_while_running = None
    for line in process.lines(0.25):
        if line is None:
            continue
        lines.append(line)
        if line.startswith("[ 1s ]") and leader_while_running is None:
            leader_while_running = sshd_server.ssh(ssh_key_file, f"cat /proc/{process.pgid}/comm")
    exit_code = process.wait()

    assert leader_while_running == "sysbench\n", "the first report came while sysbench ran"
    assert exit_code == 0
    assert not any(line.startswith("benchdash-") for line in lines), "markers are not output"
    assert any(line.startswith("CPU speed:") for line in lines)


def test_stderr_and_the_exit_code_are_kept(ssh_host):
    process = executor_for(ssh_host).start(command("cpu", "--no-such-option=1", "run"))

    lines = collect(process)

    assert process.wait() == 1
    assert process.stderr_lines == ["invalid option: --no-such-option=1"]
    assert "invalid option: --no-such-option=1" in lines


def test_the_private_directory_is_0700_the_config_gone_once_read_and_removed_after(
    ssh_host, sshd_server, ssh_key_file
):
    secret_config = "mysql-password='not-on-any-command-line'\n"

    def make(config_path: str) -> SysbenchCommand:
        return SysbenchCommand(
            # Long enough for two SSH round trips on a loaded machine to see it running.
            argv=["sysbench", f"--config-file={config_path}", "cpu", "--time=8", "run"],
            config_text=secret_config,
        )

    process = executor_for(ssh_host).start(make)
    workdir = sshd_server.ssh(ssh_key_file, f"readlink /proc/{process.pgid}/cwd").strip()
    # sysbench reads its config file at its start, from a FIFO that goes once read: the
    # password is in no file on the load host while sysbench runs.
    config = f"{workdir}/sysbench.cfg"
    modes = sshd_server.ssh(
        ssh_key_file,
        f"stat -c '%a %n' {workdir}; i=0; while [ -e {config} ] && [ $i -lt 50 ]; "
        f"do sleep 0.1; i=$((i + 1)); done; test -e {config} || echo gone; cat {workdir}/pgid",
    )
    collect(process)
    assert process.wait() == 0

    assert modes.splitlines() == [f"700 {workdir}", "gone", str(process.pgid)]
    assert sshd_server.ssh(ssh_key_file, f"test -e {workdir} || echo gone") == "gone\n"


PAYLOADS = [
    "; touch {pwned}",
    "$(touch {pwned})",
    "`touch {pwned}`",
    "x' ; touch {pwned} ; echo '",
    'x" ; touch {pwned} ; echo "',
    "x\ntouch {pwned}",
    "x && touch {pwned} || touch {pwned}",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_shell_metacharacters_reach_sysbench_as_one_literal_argument(
    ssh_host, sshd_server, payload
):
    pwned = sshd_server.dir / "pwned"
    value = payload.format(pwned=pwned)
    process = executor_for(ssh_host).start(
        command("./echo.lua", "--events=1", "--time=0", f"--note={value}", "run"),
        files={"echo.lua": ECHO_LUA},
    )

    output = "\n".join(collect(process))

    assert process.wait() == 0
    assert f"note=[{value}]" in output
    assert not pwned.exists(), "nothing was executed"


def test_a_host_without_sysbench_says_so(make_ssh_host, sshd_server):
    path = sshd_server.path_without("sysbench")
    host = make_ssh_host(
        "loadhost-bare", command=f'export PATH={path}; exec sh -c "$SSH_ORIGINAL_COMMAND"'
    )
    executor = executor_for(host)

    with pytest.raises(ExecutorError) as refused:
        executor.start(command("cpu", "run"))

    assert "sysbench is not installed on load host 'loadhost-bare'" in str(refused.value)
    assert executor.sysbench_version() is None
    assert executor.facts()["sysbench_version"] is None


def test_the_soft_open_file_limit_is_raised_to_the_hard_one(make_ssh_host):
    host = make_ssh_host(
        "loadhost-soft", command='ulimit -S -n 50; exec sh -c "$SSH_ORIGINAL_COMMAND"'
    )
    executor = executor_for(host)
    limits: Any = executor.facts()["ulimit_nofile"]
    assert limits["soft"] == 50 < limits["hard"]

    process = executor.start(
        command("./limits.lua", "--events=1", "--time=0", "run"), files={"limits.lua": LIMITS_LUA}
    )
    line = next(line for line in collect(process) if line.startswith("Max open files"))
    process.wait()

    soft, hard = line.split()[3:5]
    assert int(soft) == int(hard) == limits["hard"]


# --- killing a remote process group ----------------------------------------------------------


def test_kill_group_stops_a_remote_sysbench_over_a_new_connection(
    ssh_host, sshd_server, ssh_key_file
):
    process = executor_for(ssh_host).start(command("cpu", "--time=60", "run"))

    assert executor_for(ssh_host).kill_group(process.pgid) is True

    collect(process)
    assert process.wait() != 0
    alive = sshd_server.ssh(ssh_key_file, f"cat /proc/{process.pgid}/comm 2>/dev/null || true")
    assert alive == ""


def test_kill_group_leaves_a_group_that_is_not_sysbench_alone(ssh_host, sshd_server, ssh_key_file):
    pid = sshd_server.ssh(
        ssh_key_file, "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $!"
    ).strip()
    try:
        assert executor_for(ssh_host).kill_group(int(pid)) is False
        assert sshd_server.ssh(ssh_key_file, f"cat /proc/{pid}/comm") == "sleep\n"
    finally:
        sshd_server.ssh(ssh_key_file, f"kill {pid}")


def test_an_ssh_executor_is_what_an_ssh_load_host_gets(ssh_host):
    assert isinstance(executor_for(ssh_host), SSHExecutor)
