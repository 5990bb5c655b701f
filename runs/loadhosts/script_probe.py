"""What a custom Lua script offers, asked of sysbench itself: the script's files are
written to a private temporary directory (0700, removed after), and sysbench runs a
probe there that loads the entry script (its `require`s find their siblings in the
working directory), prints the commands it defines, and then sysbench's `help` prints
the options the script declared. The output is read by runs/sysbench/script_options.py.

Loading a script runs its top-level code: the probe runs as the scripts' own account where
the service is root (script_account.py: no key, no project tree), in a session and process
group of its own, with an environment of four variables and no standard input, for a
bounded time; then its whole group is killed, whether it ended or overran. Uploading a
script needs a permission for that reason too (runs/services/scripts/luascripts.py).
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from runs.loadhosts.executor import ExecutorError
from runs.loadhosts.script_account import ScriptAccount, end_group, script_account

PROBE_NAME = "benchdash-probe.lua"
PROBE_TIMEOUT_S = 20
MAX_OUTPUT = 1 << 20  # bytes of each of stdout and stderr kept: a probe prints a few kB
_PROBE = """\
dofile({entry})
for name, _ in pairs(sysbench.cmdline.commands or {{}}) do
  print("benchdash-command: " .. name)
end
for _, name in ipairs({{"prepare", "cleanup", "check", "prewarm"}}) do
  if type(_G[name]) == "function" then print("benchdash-command: " .. name) end
end
"""


def script_env(workdir: str) -> dict[str, str]:
    """The environment a custom script runs in on the worker's machine: none of the
    worker's variables (its secrets live there), C messages, and Lua looking for modules
    in the script's own directory first."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "HOME": workdir,
        "LUA_PATH": f"{workdir}/?.lua;;",
    }


def write_files(directory: Path, files: Mapping[str, str]) -> None:
    """The script's files, flat, each created new (a name is never followed as a link)."""
    for name, text in files.items():
        if "/" in name or name.startswith("."):
            raise ExecutorError(f"{name!r} is not a plain file name")
        fd = os.open(directory / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)


def probe_script(files: Mapping[str, str], entry: str, sysbench: str = "sysbench") -> list[str]:
    """The probe's output lines (stdout, then stderr); ExecutorError when sysbench is
    missing, the script may not be loaded here (script_account.py) or the probe overran
    its time. Whatever the script started is gone when this returns."""
    account = script_account(discovery=True)
    workdir = account.directory("benchdash-probe-")
    try:
        write_files(workdir, {**files, PROBE_NAME: _PROBE.format(entry=_lua_string(entry))})
        account.hand_over(workdir)
        stdout, stderr = _run(account, [sysbench, PROBE_NAME, "help"], workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return stdout.splitlines() + stderr.splitlines()


def _run(account: ScriptAccount, argv: list[str], workdir: Path) -> tuple[str, str]:
    """Its output until sysbench itself exits (a background child may hold the pipes
    open: it is not waited for), within the limit; then its whole group is killed."""
    try:
        popen = subprocess.Popen(
            argv,
            cwd=workdir,
            env=script_env(str(workdir)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            **account.popen_options(),
        )
    except FileNotFoundError:
        raise ExecutorError(f"sysbench is not installed here ({argv[0]} not found)") from None
    except OSError as e:
        raise ExecutorError(f"cannot start sysbench here: {e}") from None
    with popen:
        pipes = _Pipes(popen)
        exited = False
        try:
            exited = pipes.read(pidfd_of=popen.pid, until=time.monotonic() + PROBE_TIMEOUT_S)
        finally:
            # Not reaped yet, so the group id is still its own: ended or overran, the
            # whole group goes, then what it left where every account may write.
            end_group(popen.pid)
            account.end(popen)
        pipes.read(pidfd_of=None, until=time.monotonic() + 2)  # what it printed last
        popen.wait()
    if not exited:
        raise ExecutorError(
            f"loading the script took longer than {PROBE_TIMEOUT_S} s: does its top level "
            "wait for something?"
        )
    return pipes.text()


class _Pipes:
    """sysbench's stdout and stderr, kept up to MAX_OUTPUT bytes each."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        assert popen.stdout is not None and popen.stderr is not None
        self._fds = [popen.stdout.fileno(), popen.stderr.fileno()]
        self._data = {fd: bytearray() for fd in self._fds}
        self._open = set(self._fds)

    def read(self, *, pidfd_of: int | None, until: float) -> bool:
        """Read until both pipes end, `until` passes, or (pidfd_of) that process exits;
        whether it ended other than by the clock."""
        with selectors.DefaultSelector() as selector:
            for fd in self._open:
                selector.register(fd, selectors.EVENT_READ)
            pidfd = os.pidfd_open(pidfd_of) if pidfd_of is not None else None
            if pidfd is not None:
                selector.register(pidfd, selectors.EVENT_READ)
            try:
                return self._loop(selector, pidfd, until)
            finally:
                if pidfd is not None:
                    os.close(pidfd)

    def _loop(self, selector: selectors.BaseSelector, pidfd: int | None, until: float) -> bool:
        while self._open:
            left = until - time.monotonic()
            if left <= 0:
                return False
            for key, _ in selector.select(left):
                if key.fd == pidfd:
                    return True
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    self._open.discard(key.fd)
                elif len(self._data[key.fd]) < MAX_OUTPUT:
                    self._data[key.fd] += chunk
        return True

    def text(self) -> tuple[str, str]:
        out, err = (self._data[fd].decode(errors="replace") for fd in self._fds)
        return out, err


def _lua_string(text: str) -> str:
    # The entry's name was checked (letters, digits, _ and -, .lua): quoting is a formality.
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
