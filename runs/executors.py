"""Executors: the only place that spawns sysbench.

An executor starts a sysbench command on a load host and hands back a process whose
output lines arrive as they are printed. The password travels in a config file in a
private directory (0700, file 0600), never on the command line, and the directory is
removed when the process ends. `LocalExecutor` runs sysbench as a child of the worker;
`SSHExecutor` runs it on a remote load host through a fixed wrapper script.
"""

from __future__ import annotations

import logging
import os
import platform
import re
import resource
import selectors
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import paramiko

from runs import ssh
from runs.sysbench.command import SysbenchCommand

if TYPE_CHECKING:
    from runs.models import LoadHost

CommandFactory = Callable[[str], SysbenchCommand]

logger = logging.getLogger(__name__)
_WORKSPACE_NAME = re.compile(r"[A-Za-z0-9_-]{1,100}")


class ExecutorError(Exception):
    """sysbench could not be started; the message names the host and the cause."""


class SysbenchProcess(Protocol):
    command: SysbenchCommand
    pgid: int
    stderr_lines: list[str]

    def lines(self, tick: float) -> Iterator[str | None]:
        """Output lines as they come; None every `tick` seconds of silence."""
        ...

    def kill(self) -> None: ...

    def wait(self) -> int: ...


class Executor(Protocol):
    host_name: str
    sysbench: str

    def start(
        self, make_command: CommandFactory, files: Mapping[str, str] | None = None
    ) -> SysbenchProcess:
        """Start sysbench; `files` (name → text) go into its private directory, next to
        the config file whose path make_command receives."""
        ...

    def facts(self) -> dict[str, object]: ...

    def sysbench_version(self) -> str | None: ...

    def kill_group(self, pgid: int) -> bool: ...


class LocalProcess:
    """sysbench as a child of the worker, leader of its own process group."""

    def __init__(self, command: SysbenchCommand, workdir: Path, cwd: str | None = None) -> None:
        self.command = command
        self.stderr_lines: list[str] = []
        self._workdir = workdir  # the private directory of the config file, removed at the end
        self._popen = subprocess.Popen(
            command.argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=cwd or workdir,
            # A session of its own: the whole group can be killed at once, and it survives
            # a SIGKILLed worker so the sweeper can find and kill it by its group id.
            start_new_session=True,
            env={**os.environ, "LC_ALL": "C"},
        )
        self.pgid = self._popen.pid

    def lines(self, tick: float) -> Iterator[str | None]:
        assert self._popen.stdout is not None and self._popen.stderr is not None
        selector = selectors.DefaultSelector()
        buffers = {self._popen.stdout.fileno(): b"", self._popen.stderr.fileno(): b""}
        stderr_fd = self._popen.stderr.fileno()
        for fd in buffers:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        try:
            while buffers:
                events = selector.select(timeout=tick)
                if not events:
                    yield None
                for key, _ in events:
                    fd = int(key.fd)
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        selector.unregister(fd)
                        rest = buffers.pop(fd)
                        if rest:
                            yield self._decode(rest, fd == stderr_fd)
                        continue
                    *complete, buffers[fd] = (buffers[fd] + chunk).split(b"\n")
                    for raw in complete:
                        yield self._decode(raw, fd == stderr_fd)
        finally:
            selector.close()

    def _decode(self, raw: bytes, from_stderr: bool) -> str:
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        if from_stderr:
            self.stderr_lines.append(line)
        return line

    def kill(self) -> None:
        kill_process_group(self.pgid)

    def wait(self) -> int:
        try:
            return self._popen.wait()
        finally:
            shutil.rmtree(self._workdir, ignore_errors=True)


class LocalExecutor:
    """Runs sysbench on the worker's own machine."""

    host_name = "local"

    def __init__(self, sysbench: str = "sysbench") -> None:
        self.sysbench = sysbench

    def start(
        self,
        make_command: CommandFactory,
        files: Mapping[str, str] | None = None,
        *,
        cwd: str | None = None,
    ) -> LocalProcess:
        """Start sysbench in `cwd` (a workspace) or else in its private directory."""
        if files:
            # Custom Lua scripts are arbitrary code: never next to the worker's secrets.
            raise ExecutorError(
                f"custom Lua scripts run on SSH load hosts only, not on '{self.host_name}'"
            )
        _raise_open_files_limit()
        workdir = Path(tempfile.mkdtemp(prefix="benchdash-"))  # created 0700
        config_path = workdir / "sysbench.cfg"
        command = make_command(str(config_path))
        fd = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(command.config_text)
        try:
            return LocalProcess(command, workdir, cwd)
        except FileNotFoundError:
            shutil.rmtree(workdir, ignore_errors=True)
            raise ExecutorError(
                f"sysbench is not installed on load host '{self.host_name}' "
                f"({command.argv[0]} not found on PATH); install it, e.g. apt-get install sysbench"
            ) from None
        except OSError as e:
            shutil.rmtree(workdir, ignore_errors=True)
            raise ExecutorError(f"cannot start sysbench on '{self.host_name}': {e}") from None

    def workspace(self, name: str) -> str:
        """A working directory that outlives one sysbench process: fileio's test files live
        there from prepare through the runs to cleanup. Named by the caller (the batch), so
        that a batch resumed after a crash finds its files again. It lives under
        BENCHDASH_WORK_DIR, on the disk being measured rather than a tmpfs."""
        from django.conf import settings

        if not _WORKSPACE_NAME.fullmatch(name):
            raise ExecutorError(f"{name!r} is not a workspace name")
        root = Path(settings.BENCHDASH_WORK_DIR)
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = root / name
        path.mkdir(mode=0o700, exist_ok=True)
        return str(path)

    def remove_workspace(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def facts(self) -> dict[str, object]:
        """The environment of this load host, recorded on every batch."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        uname = platform.uname()
        return {
            "host": self.host_name,
            "hostname": socket.gethostname(),
            "os": _os_release(),
            "kernel": f"{uname.system} {uname.release}",
            "machine": uname.machine,
            "cpu_model": _cpu_model(),
            "cpu_cores": os.cpu_count(),
            "memory_bytes": _memory_bytes(),
            "ulimit_nofile": {"soft": soft, "hard": hard},
            "sysbench_version": self.sysbench_version(),
            "load_average": list(os.getloadavg()),
            "work_free_bytes": _free_bytes(_work_dir()),
        }

    def sysbench_version(self) -> str | None:
        try:
            out = subprocess.run(
                [self.sysbench, "--version"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() or None

    def kill_group(self, pgid: int) -> bool:
        return kill_process_group(pgid)


def _work_dir() -> str:
    from django.conf import settings

    return str(settings.BENCHDASH_WORK_DIR)


def _free_bytes(path: str) -> int | None:
    """Free space on the file system of `path`, or of its nearest existing parent."""
    for candidate in (Path(path), *Path(path).parents):
        if candidate.exists():
            return shutil.disk_usage(candidate).free
    return None


def _raise_open_files_limit() -> None:
    """Soft open-file limit up to the hard one, for the worker and so for sysbench: each
    sysbench thread holds a connection, that is a file descriptor."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def kill_process_group(pgid: int, grace_s: float = 2.0) -> bool:
    """Stop a sysbench process group: SIGTERM, then SIGKILL after a grace period.

    Only a group whose leader is still a sysbench process is signalled, so a recycled
    process id never takes an innocent process down. Returns whether a group was found.
    """
    if not _is_sysbench(pgid):
        return False
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, grace_s)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _group_alive(pgid):
                return True
            time.sleep(0.05)
    return True


def _is_sysbench(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"sysbench" in cmdline.split(b"\0", 1)[0]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # A zombie child of ours still counts for killpg: reap it if it is ours.
    try:
        pid, _ = os.waitpid(pgid, os.WNOHANG)
        if pid == pgid:
            return False
    except ChildProcessError:
        pass
    return _is_sysbench(pgid) and not _is_zombie(pgid)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.platform()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# --- SSH load hosts ------------------------------------------------------------------------

# On a remote host sysbench is looked up on the PATH of the SSH user: BENCHDASH_SYSBENCH
# names a program on the worker's own machine.
REMOTE_SYSBENCH = "sysbench"
CONFIG_NAME = "sysbench.cfg"  # in the private directory, which is sysbench's working dir
START_MARKER = "benchdash-"

# The only command that starts sysbench on a load host. Its arguments are sysbench's argv,
# each element quoted by shlex.quote on the worker: this shell never parses user text.
RUN_WRAPPER = r"""
set -u
umask 077
export LC_ALL=C
command -v "$1" >/dev/null 2>&1 || { echo benchdash-missing; exit 127; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/benchdash.XXXXXXXXXX") || exit 125
trap 'rm -rf "$dir"' EXIT
trap 'exit 129' HUP
trap 'exit 143' TERM
echo "benchdash-dir $dir"
# The worker uploads the config file (and a Lua script) over SFTP, then says go; if it
# goes away instead, stdin ends and the directory is removed.
read -r go || exit 125
[ "$go" = go ] || exit 125
# Each sysbench thread holds a connection, that is a file descriptor.
ulimit -S -n "$(ulimit -H -n)" 2>/dev/null
cd "$dir" || exit 125
# sysbench flushes its reports, but a Lua script's print() would wait for a full buffer.
command -v stdbuf >/dev/null 2>&1 && set -- stdbuf -oL "$@"
# A session of its own: the group is killed as one, by its id, even over a new connection
# after this one is gone. Its id comes first on stdout, before sysbench prints anything.
setsid sh -c 'echo $$ >pgid; echo "benchdash-pgid $$"; exec "$@"' sysbench "$@" </dev/null &
pid=$!
# The wrapper itself writes nothing more: once the connection is gone, a write (the shell
# reporting a killed job) would end it by SIGPIPE, before it removed the directory.
exec >/dev/null 2>&1
wait "$pid"
code=$?
exit $code
"""

# Stops the process group $1, only if its leader is still sysbench: a recycled process id
# never takes an innocent process down. Exit 3: there is no such sysbench.
KILL_SCRIPT = r"""
pgid=$1
alive() {
  [ "$(cat "/proc/$pgid/comm" 2>/dev/null)" = sysbench ] &&
    ! grep -q ') Z' "/proc/$pgid/stat" 2>/dev/null
}
alive || exit 3
for sig in TERM KILL; do
  kill -s "$sig" -- "-$pgid" 2>/dev/null || exit 0
  i=0
  while [ "$i" -lt 20 ]; do alive || exit 0; sleep 0.1; i=$((i + 1)); done
done
exit 0
"""

# What a load host is, one name=value per line; /sys/block rather than lsblk, which
# minimal systems lack.
FACTS_SCRIPT = r"""
export LC_ALL=C
fact() { printf '%s=%s\n' "$1" "$2"; }
fact hostname "$(uname -n)"
fact os "$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null)"
fact kernel "$(uname -sr)"
fact machine "$(uname -m)"
fact cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
fact cpu_cores "$(getconf _NPROCESSORS_ONLN 2>/dev/null)"
fact memory_kb "$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\) kB$/\1/p' /proc/meminfo)"
fact nofile_soft "$(ulimit -S -n)"
fact nofile_hard "$(ulimit -H -n)"
fact loadavg "$(cut -d ' ' -f 1-3 /proc/loadavg)"
fact sysbench "$(sysbench --version 2>/dev/null)"
# sysbench works in its private directory there: fileio's files would go there too.
fact work_free_kb "$(df -Pk "${TMPDIR:-/tmp}" 2>/dev/null | awk 'NR == 2 {print $4}')"
for d in /sys/block/*; do
  n=${d##*/}
  case $n in loop*|ram*|zram*|dm-*|md*|sr*|nbd*|fd*) continue ;; esac
  fact disk "$n $(cat "$d/size" 2>/dev/null) $(cat "$d/queue/rotational" 2>/dev/null)"
done
"""


def remote_command(script: str, *args: str) -> str:
    """A shell command running a constant script with arguments, each one quoted."""
    return " ".join(["sh", "-c", shlex.quote(script), "benchdash", *map(shlex.quote, args)])


class SSHProcess:
    """sysbench under the wrapper on a load host, streamed over its SSH channel."""

    def __init__(
        self,
        command: SysbenchCommand,
        executor: SSHExecutor,
        transport: paramiko.Transport,
        reader: ssh.ChannelReader,
        pgid: int,
        pending: list[str],
    ) -> None:
        self.command = command
        self.pgid = pgid
        self.stderr_lines: list[str] = []
        self._executor = executor
        self._transport = transport
        self._reader = reader
        self._pending = pending  # lines that came with the wrapper's markers

    def lines(self, tick: float) -> Iterator[str | None]:
        yield from self._pending
        self._pending = []
        reader = self._reader
        while not reader.done:
            got = reader.pump(tick)
            yield from self._take(final=False)
            if not got:
                yield None
        yield from self._take(final=True)
        if not reader.channel.status_event.is_set() and not self._transport.is_active():
            lost = f"FATAL: the SSH connection to {self._executor.host_name} was lost"
            self.stderr_lines.append(lost)
            yield lost

    def _take(self, final: bool) -> Iterator[str]:
        yield from self._reader.stdout_lines(final)
        for line in self._reader.stderr_lines(final):
            self.stderr_lines.append(line)
            yield line

    def kill(self) -> None:
        try:
            self._executor.kill_group(self.pgid, transport=self._transport)
            return
        except ExecutorError:
            pass  # the connection is gone: try a new one
        try:
            self._executor.kill_group(self.pgid)
        except ExecutorError as e:
            # The caller goes on either way; the sweeper's kill is the next chance.
            logger.error(
                "cannot stop sysbench group %s on %s: %s", self.pgid, self._executor.host_name, e
            )

    def wait(self) -> int:
        try:
            return self._reader.exit_code(self._executor.host.timeout)
        finally:
            self._transport.close()


class SSHExecutor:
    """Runs sysbench on a remote load host whose host key was confirmed."""

    def __init__(self, host: ssh.SSHHost, sysbench: str = REMOTE_SYSBENCH) -> None:
        self.host = host
        self.host_name = host.name
        self.sysbench = sysbench

    def start(
        self, make_command: CommandFactory, files: Mapping[str, str] | None = None
    ) -> SSHProcess:
        command = make_command(f"./{CONFIG_NAME}")
        transport = self._connect()
        try:
            return self._start(
                transport, command, {CONFIG_NAME: command.config_text, **(files or {})}
            )
        except ssh.SSHError as e:
            transport.close()
            raise ExecutorError(str(e)) from None
        except BaseException:
            transport.close()
            raise

    def _start(
        self, transport: paramiko.Transport, command: SysbenchCommand, files: Mapping[str, str]
    ) -> SSHProcess:
        timeout = self.host.timeout
        reader = ssh.open_command(transport, remote_command(RUN_WRAPPER, *command.argv), timeout)
        directory, _ = self._expect(reader, "dir")
        for name, text in files.items():
            ssh.upload(self.host, transport, f"{directory}/{name}", text)
        reader.channel.sendall(b"go\n")
        reader.channel.shutdown_write()
        pgid, pending = self._expect(reader, "pgid")
        if not pgid.isdigit():
            raise ExecutorError(f"the wrapper on {self.host_name} printed no process group id")
        return SSHProcess(command, self, transport, reader, int(pgid), pending)

    def _expect(self, reader: ssh.ChannelReader, marker: str) -> tuple[str, list[str]]:
        """Read the wrapper's stdout up to its `benchdash-<marker> value` line; returns the
        value and the lines that came after it."""
        deadline = time.monotonic() + self.host.timeout
        while time.monotonic() < deadline and not reader.done:
            reader.pump(0.1)
            lines = reader.stdout_lines()
            for i, line in enumerate(lines):
                if line == f"{START_MARKER}missing":
                    raise ExecutorError(self._missing())
                if line.startswith(f"{START_MARKER}{marker} "):
                    return line.split(" ", 1)[1], lines[i + 1 :]
        raise ExecutorError(self._no_start(reader))

    def _missing(self) -> str:
        return (
            f"sysbench is not installed on load host '{self.host_name}' ({self.sysbench} not "
            f"found on the PATH of {self.host.user}); install it, e.g. apt-get install sysbench"
        )

    def _no_start(self, reader: ssh.ChannelReader) -> str:
        if not reader.done:
            return f"sysbench did not start on '{self.host_name}' within {self.host.timeout:g} s"
        stderr = " ".join(reader.stderr_lines(final=True))[-500:]
        code = reader.exit_code(1.0)
        return f"cannot start sysbench on '{self.host_name}' (exit code {code}): {stderr}".strip()

    def facts(self) -> dict[str, object]:
        """The environment of this load host, recorded on every batch and on the host."""
        result = self._run(FACTS_SCRIPT)
        return {"host": self.host_name, **_parse_facts(result.stdout)}

    def sysbench_version(self) -> str | None:
        result = self._run(f"{shlex.quote(self.sysbench)} --version")
        if result.exit_code != 0:
            return None
        return result.stdout.strip() or None

    def kill_group(self, pgid: int, transport: paramiko.Transport | None = None) -> bool:
        command = remote_command(KILL_SCRIPT, str(int(pgid)))
        return self._run(command, transport).exit_code == 0

    def _run(self, command: str, transport: paramiko.Transport | None = None) -> ssh.CommandResult:
        own = transport is None
        try:
            transport = transport or self._connect()
            return ssh.run(self.host, transport, command)
        except ssh.SSHError as e:
            raise ExecutorError(str(e)) from None
        finally:
            if own and transport is not None:
                transport.close()

    def _connect(self) -> paramiko.Transport:
        try:
            return ssh.connect(self.host)
        except ssh.SSHError as e:
            raise ExecutorError(str(e)) from None


def _parse_facts(text: str) -> dict[str, object]:
    raw: dict[str, str] = {}
    disks: list[dict[str, object]] = []
    for line in text.splitlines():
        name, _, value = line.partition("=")
        if name == "disk":
            disks.append(_disk(value))
        else:
            raw[name] = value.strip()
    memory_kb = _int(raw.get("memory_kb"))
    work_free_kb = _int(raw.get("work_free_kb"))
    return {
        "hostname": raw.get("hostname", ""),
        "os": raw.get("os", ""),
        "kernel": raw.get("kernel", ""),
        "machine": raw.get("machine", ""),
        "cpu_model": raw.get("cpu_model", ""),
        "cpu_cores": _int(raw.get("cpu_cores")),
        "memory_bytes": memory_kb * 1024 if memory_kb is not None else None,
        "disks": disks,
        "ulimit_nofile": {
            "soft": _int(raw.get("nofile_soft")),
            "hard": _int(raw.get("nofile_hard")),
        },
        "sysbench_version": raw.get("sysbench") or None,
        "load_average": [float(x) for x in raw.get("loadavg", "").split()],
        "work_free_bytes": work_free_kb * 1024 if work_free_kb is not None else None,
    }


def _disk(value: str) -> dict[str, object]:
    name, sectors, rotational = [*value.split(), "", "", ""][:3]
    size = _int(sectors)
    return {
        "name": name,
        "bytes": size * 512 if size is not None else None,  # /sys/block counts 512-byte sectors
        "rotational": rotational == "1",
    }


def _int(text: str | None) -> int | None:
    """Whole numbers; None for "unlimited" or when the host did not say."""
    return int(text) if text and text.isdigit() else None


def executor_for(load_host: LoadHost, sysbench: str = "sysbench") -> Executor:
    """The executor of a load host; `sysbench` is the program on the worker's machine."""
    if load_host.kind == "local":
        return LocalExecutor(sysbench)
    if load_host.kind == "ssh":
        from django.conf import settings

        host = ssh.SSHHost.from_load_host(load_host, timeout=settings.BENCHDASH_SSH_TIMEOUT)
        return SSHExecutor(host)
    raise ExecutorError(f"no executor for load hosts of kind {load_host.kind!r}")
