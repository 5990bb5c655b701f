"""The local load host: sysbench as a child of the worker, leader of its own process group,
and the facts of the worker's own machine."""

from __future__ import annotations

import functools
import logging
import os
import platform
import re
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from runs.loadhosts.executor import CONFIG_DIR_PREFIX, CommandFactory, ExecutorError, lines_of
from runs.loadhosts.script_account import ScriptAccount, end_group, script_account
from runs.loadhosts.script_probe import script_env, write_files
from runs.loadhosts.tuning import tuning_facts, tuning_text
from runs.sysbench.command import SysbenchCommand

logger = logging.getLogger(__name__)
_WORKSPACE_NAME = re.compile(r"[A-Za-z0-9_-]{1,100}")


class LocalProcess:
    """sysbench as a child of the worker, leader of its own process group."""

    def __init__(
        self,
        command: SysbenchCommand,
        workdir: Path,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        account: ScriptAccount | None = None,
    ) -> None:
        self.command = command
        self.stderr_lines: list[str] = []
        self._account = account or ScriptAccount()
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
            env=env or {**os.environ, "LC_ALL": "C"},
            **self._account.popen_options(),
        )
        self.pgid = self._popen.pid
        self.config_dir = str(workdir)
        assert self._popen.stdout is not None and self._popen.stderr is not None
        self._stderr_fd = self._popen.stderr.fileno()
        self._buffers = {self._popen.stdout.fileno(): b"", self._stderr_fd: b""}
        self._selector = selectors.DefaultSelector()
        for fd in self._buffers:
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)
        # A script's background child may hold the pipes open: sysbench's exit ends its group.
        self._exit_fd = os.pidfd_open(self.pgid) if self._account.separate else -1
        if self._exit_fd >= 0:
            self._selector.register(self._exit_fd, selectors.EVENT_READ)

    def read(self, timeout: float) -> list[str] | None:
        """Wait up to `timeout` s for output (blocked on the pipes, not polling); the
        complete lines printed meanwhile, [] if none, None once both pipes are closed."""
        if not self._buffers:
            self._selector.close()
            return None
        lines: list[str] = []
        for key, _ in self._selector.select(timeout=max(0.0, timeout)):
            fd = int(key.fd)
            if fd == self._exit_fd:
                self._selector.unregister(fd)
                end_group(self.pgid)  # not reaped yet: the group id is still its own
                continue
            from_stderr = fd == self._stderr_fd
            chunk = os.read(fd, 65536)
            if not chunk:
                self._selector.unregister(fd)
                rest = self._buffers.pop(fd)
                if rest:
                    lines.append(self._decode(rest, from_stderr))
                continue
            *complete, self._buffers[fd] = (self._buffers[fd] + chunk).split(b"\n")
            lines += [self._decode(raw, from_stderr) for raw in complete]
        return lines

    def lines(self, tick: float) -> Iterator[str | None]:
        return lines_of(self, tick)

    def _decode(self, raw: bytes, from_stderr: bool) -> str:
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        if from_stderr:
            self.stderr_lines.append(line)
        return line

    def kill(self) -> None:
        if self._popen.returncode is None:  # not waited for yet
            kill_process_group(self.pgid)

    def wait(self) -> int:
        try:
            if self._account.separate:
                self._account.end(self._popen)
            return self._popen.wait()
        finally:
            self._selector.close()
            if self._exit_fd >= 0:  # once: wait() may be called again
                os.close(self._exit_fd)
                self._exit_fd = -1
            shutil.rmtree(self._workdir, ignore_errors=True)


class StagedLocal:
    """sysbench's config file in place on the worker's machine, waiting for its go."""

    def __init__(
        self,
        host_name: str,
        command: SysbenchCommand,
        workdir: Path,
        cwd: str | None,
        env: dict[str, str] | None = None,
        account: ScriptAccount | None = None,
    ) -> None:
        self.host_name = host_name
        self.command = command
        self.config_dir = str(workdir)
        self._workdir = workdir
        self._cwd = cwd
        self._env = env
        self._account = account

    def go(self) -> LocalProcess:
        try:
            return LocalProcess(self.command, self._workdir, self._cwd, self._env, self._account)
        except FileNotFoundError:
            self.abandon()
            raise ExecutorError(
                f"sysbench is not installed on load host '{self.host_name}' "
                f"({self.command.argv[0]} not found on PATH); install it, e.g. "
                "apt-get install sysbench"
            ) from None
        except OSError as e:
            self.abandon()
            raise ExecutorError(f"cannot start sysbench on '{self.host_name}': {e}") from None

    def abandon(self) -> None:
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
        return self.stage(make_command, files, cwd=cwd).go()

    def stage(
        self,
        make_command: CommandFactory,
        files: Mapping[str, str] | None = None,
        *,
        cwd: str | None = None,
    ) -> StagedLocal:
        """sysbench's private directory with its config file, ready for `go()`. A custom
        script's files go beside it, and sysbench then runs with none of the worker's
        environment (script_probe.script_env): its siblings are found by `require`; as
        the scripts' account where the service is root (script_account.py), which owns
        the directory and reads the config file (the password of its own run)."""
        _raise_open_files_limit()
        account = script_account() if files else ScriptAccount()
        workdir = account.directory(CONFIG_DIR_PREFIX)  # created 0700
        config_path = workdir / "sysbench.cfg"
        command = make_command(str(config_path))
        fd = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(command.config_text)
        if not files:
            return StagedLocal(self.host_name, command, workdir, cwd)
        try:
            write_files(workdir, files)
            account.hand_over(workdir)
        except (OSError, ExecutorError):
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        if account.separate:
            cwd = None  # a workspace is under var/, closed to the account: its own directory
        env = script_env(str(workdir))
        return StagedLocal(self.host_name, command, workdir, cwd, env, account)

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

    def remove_config_dir(self, path: str) -> bool:
        """Remove sysbench's private directory of a process that lost its worker: only a
        directory of the kind this executor makes (named with our prefix, not a link);
        whether one was there."""
        candidate = Path(path)
        if not candidate.is_absolute() or not candidate.name.startswith(CONFIG_DIR_PREFIX):
            raise ExecutorError(f"{path!r} is not a private directory of sysbench")
        if candidate.is_symlink() or not candidate.is_dir():
            return False
        shutil.rmtree(candidate, ignore_errors=True)
        return True

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
            **tuning_facts(tuning_text()),
        }

    def sysbench_version(self) -> str | None:
        path = shutil.which(self.sysbench)
        if path is None:
            return None
        try:
            binary = os.stat(path)
        except OSError:
            return None
        return _version_of(path, binary.st_mtime_ns, binary.st_size)

    def kill_group(self, pgid: int) -> bool:
        return kill_process_group(pgid)


@functools.lru_cache(maxsize=8)
def _version_of(path: str, mtime_ns: int, size: int) -> str | None:
    """`sysbench --version` of one binary, asked once per worker (0.1 s each time, and a
    batch asked twice): the binary's time and size in the key, so an upgrade is seen."""
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


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
