"""The only code that starts sysbench or opens SSH: executors for the local host and for
SSH load hosts (runs/loadhosts/local.py, remote.py, and the shell scripts it runs there,
remote_scripts.py), the SSH layer with its pinned host keys (ssh.py, hostkeys.py), the
database server's machine as a target's restarts use it, the worker's own or its server
host over SSH (server_shell.py, server_ssh.py), what a custom Lua script offers, asked of
sysbench (script_probe.py), the account uploaded code runs as on this machine and what it
leaves (script_account.py), what a host is (facts.py) and how it is tuned (tuning.py: CPU
governor, network cards and their interrupts), its /proc files streamed once a second for
the host metrics (procstream.py; the worker's own machine's read with few system calls,
procfiles.py), and the sync probe that times fsyncs on the file system of a server's log
from its host (sync_probe.py). It returns plain values and saves no row: the services and
the worker keep what it found.
"""

from __future__ import annotations

from django.conf import settings

from runs.loadhosts import ssh
from runs.loadhosts.executor import (
    CommandFactory,
    Executor,
    ExecutorError,
    StagedStart,
    SysbenchProcess,
)
from runs.loadhosts.local import LocalExecutor, kill_process_group
from runs.loadhosts.remote import SSHExecutor
from runs.loadhosts.server_shell import LocalShell, ServerShell, ShellError
from runs.loadhosts.server_ssh import SSHShell
from runs.models import LoadHost

__all__ = [
    "CommandFactory",
    "Executor",
    "ExecutorError",
    "LocalExecutor",
    "SSHExecutor",
    "ServerShell",
    "ShellError",
    "StagedStart",
    "SysbenchProcess",
    "executor_for",
    "kill_process_group",
    "loadhost_check",
    "server_shell",
]


def executor_for(load_host: LoadHost, sysbench: str = "sysbench") -> Executor:
    """The executor of a load host; `sysbench` is the program on the worker's machine."""
    if load_host.kind == "local":
        return LocalExecutor(sysbench)
    if load_host.kind == "ssh":
        host = ssh.SSHHost.from_load_host(load_host, timeout=settings.BENCHDASH_SSH_TIMEOUT)
        return SSHExecutor(host)
    raise ExecutorError(f"no executor for load hosts of kind {load_host.kind!r}")


def server_shell(server_host: LoadHost | None) -> ServerShell:
    """The machine of a database server: its SSH server host, else the worker's own."""
    if server_host is None:
        return LocalShell()
    host = ssh.SSHHost.from_load_host(server_host, timeout=settings.BENCHDASH_SSH_TIMEOUT)
    return SSHShell(host)


def loadhost_check(load_host: LoadHost) -> None:
    """Refuse what the SSH layer cannot use (an address that is not a host name, a port
    out of range), naming the field: InvalidInput."""
    if load_host.kind == LoadHost.Kind.SSH:
        ssh.SSHHost.from_load_host(load_host).check()
