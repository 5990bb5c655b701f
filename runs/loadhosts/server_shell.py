"""A database server's machine, as the restarts of a target use it: files tested, read and
written whole, a program found, a server started detached in a session of its own,
signalled and watched, a command run. `LocalShell` is the worker's own machine;
`server_ssh.SSHShell` the target's server host over its pinned SSH connection. Paths and
argv are plain values: no shell ever parses them (over SSH each word is shlex-quoted).
"""

from __future__ import annotations

import contextlib
import os
import signal as signals
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

MAX_READ = 1 << 20  # of a log or an include: the part a restart reads, never a whole disk
SIGNALS = {"TERM": signals.SIGTERM, "INT": signals.SIGINT}  # a clean shutdown's
KILL_WAIT_S = 10  # for a process killed past its shutdown's timeout
STOP_POLL_S = 0.2
TESTS = frozenset("defrwx")  # test(1)'s: a directory, there, a file, readable, ...
# Servers this worker process started: reaped here, or they would linger as zombies.
_children: dict[int, subprocess.Popen[bytes]] = {}


class ShellError(Exception):
    """The server's machine could not be reached or refused an operation; the message
    names the machine and the cause."""


class ServerShell(Protocol):
    where: str  # "the worker's machine", "server host db-1 (root@10.0.0.5:22)"

    def uid(self) -> int:
        """The user the operations run as (0: root)."""
        ...

    def owner(self, path: str) -> tuple[int, int] | None:
        """Uid and gid of `path`; None when there is none."""
        ...

    def realpath(self, path: str) -> str: ...

    def test(self, path: str, what: str) -> bool:
        """test(1) -d -e -f -r -w -x of `path`."""
        ...

    def first_program(self, paths: Sequence[str]) -> str:
        """The first of `paths` that is an executable file; "" for none."""
        ...

    def read(self, path: str, offset: int = 0) -> str | None:
        """The file from `offset` (MAX_READ bytes at most); None when there is none."""
        ...

    def size(self, path: str) -> int | None: ...

    def write_whole(
        self,
        path: str,
        text: str | None,
        *,
        mode: int = 0o644,
        owner: tuple[int, int] | None = None,
    ) -> None:
        """Write `path` whole (a temporary file renamed over it), or remove it (None). The
        temporary file has `mode` and `owner` (uid, gid) before the text is written in it:
        a file only its owner reads is never readable by another, not for a moment."""
        ...

    def start(
        self, argv: Sequence[str], *, cwd: str, log: str, owner: tuple[int, int] | None
    ) -> int:
        """Start `argv` in a session of its own, stdin from /dev/null, its output in `log`
        (made anew), as `owner` when given: it outlives the worker and the connection.
        Its process id."""
        ...

    def alive(self, pid: int) -> bool:
        """Whether the process runs (a zombie does not)."""
        ...

    def stop(self, pid: int, name: str, timeout: float) -> None:
        """Send TERM or INT and wait until the process has ended, KILL past `timeout`
        (then 10 s more at most); a process already gone is no error."""
        ...

    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, str]:
        """Run `argv` to its end, without a shell parsing it: its exit code (-1 when it did
        not finish in time or could not start) and its output."""
        ...

    def close(self) -> None: ...


def proc_state(stat: str) -> str:
    """The state letter of a /proc/<pid>/stat line ("" for none): after the command's
    name, which may hold spaces and parentheses."""
    fields = stat.rsplit(")", 1)[-1].split() if ")" in stat else []
    return fields[0] if fields else ""


class LocalShell:
    """The worker's own machine."""

    where = "the worker's machine"

    def uid(self) -> int:
        return os.geteuid()

    def owner(self, path: str) -> tuple[int, int] | None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        return stat.st_uid, stat.st_gid

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def test(self, path: str, what: str) -> bool:
        checks = {
            "d": os.path.isdir,
            "e": os.path.exists,
            "f": os.path.isfile,
            "r": lambda p: os.access(p, os.R_OK),
            "w": lambda p: os.access(p, os.W_OK),
            "x": lambda p: os.access(p, os.X_OK),
        }
        return bool(checks[what](path))

    def first_program(self, paths: Sequence[str]) -> str:
        return next((p for p in paths if os.path.isfile(p) and os.access(p, os.X_OK)), "")

    def read(self, path: str, offset: int = 0) -> str | None:
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                return f.read(MAX_READ).decode(errors="replace")
        except FileNotFoundError:
            return None
        except OSError as e:
            raise ShellError(f"cannot read {path} on {self.where}: {e.strerror}") from None

    def size(self, path: str) -> int | None:
        try:
            return os.stat(path).st_size
        except OSError:
            return None

    def write_whole(
        self,
        path: str,
        text: str | None,
        *,
        mode: int = 0o644,
        owner: tuple[int, int] | None = None,
    ) -> None:
        target = Path(path)
        try:
            if text is None:
                target.unlink(missing_ok=True)
                return
            temporary = target.with_name(f".{target.name}.benchdash")
            temporary.unlink(missing_ok=True)  # one left by a crash: made anew with `mode`
            made = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
            with os.fdopen(made, "w") as f:
                os.fchmod(made, mode)  # what the umask took away
                if owner is not None:
                    os.fchown(made, *owner)
                f.write(text)
            os.replace(temporary, target)
        except OSError as e:
            raise ShellError(f"cannot write {path} on {self.where}: {e.strerror}") from None

    def start(
        self, argv: Sequence[str], *, cwd: str, log: str, owner: tuple[int, int] | None
    ) -> int:
        try:
            with open(log, "wb") as output:
                if owner is not None:
                    os.chown(log, *owner)
                process = subprocess.Popen(
                    list(argv),
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=output,
                    cwd=cwd,
                    start_new_session=True,
                    user=owner[0] if owner else None,
                    group=owner[1] if owner else None,
                    extra_groups=[] if owner else None,
                )
        except OSError as e:
            raise ShellError(f"cannot start {argv[0]} on {self.where}: {e.strerror}") from None
        _children[process.pid] = process
        return process.pid

    def alive(self, pid: int) -> bool:
        child = _children.get(pid)
        if child is not None and child.poll() is not None:
            _children.pop(pid, None)
            return False
        try:
            return proc_state(Path(f"/proc/{pid}/stat").read_text()) not in ("", "Z")
        except OSError:
            return False

    def stop(self, pid: int, name: str, timeout: float) -> None:
        for signal, wait in ((SIGNALS[name], timeout), (signals.SIGKILL, KILL_WAIT_S)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal)
            deadline = time.monotonic() + wait
            while self.alive(pid) and time.monotonic() < deadline:
                time.sleep(STOP_POLL_S)
            if not self.alive(pid):
                return

    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, str]:
        try:
            done = subprocess.run(
                list(argv),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return -1, f"{argv[0]} did not finish within {timeout:g} s"
        except OSError as e:
            return -1, f"{argv[0]}: {e.strerror}"
        return done.returncode, (done.stdout + done.stderr).decode(errors="replace")

    def close(self) -> None:
        pass
