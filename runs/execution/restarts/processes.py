"""The server processes a restart stops and starts on the worker's machine: a managed
instance's binary found in its install, started in a session of its own as the owner of
its data directory with its log beside its data; a service's restart command run (an
argv list, never a shell); the include benchdash owns written and put back whole.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from runs.execution.restarts.spec import Install

LOG_NAME = "benchdash-server.log"  # in the data directory: the output of the last start
_children: dict[int, subprocess.Popen[bytes]] = {}


class RestartFailed(Exception):
    """A server that did not start or stop; the message is the server's own line."""


def server_binary(engine: str, install: Install) -> str:
    names = ("postgres",) if engine == "postgresql" else ("mariadbd", "mysqld")
    for sub in ("bin", "sbin", "libexec"):
        for name in names:
            path = Path(install.basedir) / sub / name
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    raise RestartFailed(f"no {names[0]} in {install.basedir}/bin or sbin")


def server_argv(
    engine: str, install: Install, *, port: int | None, socket: str, options: list[str]
) -> list[str]:
    """The start command: the install's config (or none), its data, the target's port."""
    binary = server_binary(engine, install)
    log = str(Path(install.datadir) / LOG_NAME)
    if engine == "postgresql":
        argv = [binary, "-D", install.datadir]
        if install.config:
            argv += ["-c", f"config_file={install.config}"]
        argv += ["-c", "logging_collector=off"]  # its log: this start's output
        if port:
            argv += ["-p", str(port)]
        return argv + options
    argv = [binary, f"--defaults-file={install.config}" if install.config else "--no-defaults"]
    if os.geteuid() == 0 and os.stat(install.datadir).st_uid == 0:
        argv.append("--user=root")
    argv += [f"--basedir={install.basedir}", f"--datadir={install.datadir}", f"--log-error={log}"]
    if port:
        argv.append(f"--port={port}")
    if socket:
        argv.append(f"--socket={socket}")
    return argv + options


def server_start(argv: list[str], install: Install) -> int:
    """Start the server in a session of its own (it outlives the worker), as the owner of
    its data directory when the worker is root; its process id."""
    log_path = Path(install.datadir) / LOG_NAME
    owner = os.stat(install.datadir)
    as_owner = os.geteuid() == 0 and owner.st_uid != 0
    with log_path.open("wb") as log:
        if as_owner:
            os.chown(log_path, owner.st_uid, owner.st_gid)
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=install.datadir,
            start_new_session=True,
            user=owner.st_uid if as_owner else None,
            group=owner.st_gid if as_owner else None,
            extra_groups=[] if as_owner else None,
        )
    _children[process.pid] = process
    return process.pid


def server_log(install: Install) -> str:
    try:
        return (Path(install.datadir) / LOG_NAME).read_text(errors="replace")
    except OSError:
        return ""


def error_line(text: str) -> str:
    """The server's own line saying why it did not start: its first error."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [x for x in lines if not x.endswith(("Aborting", "database system is shut down"))]
    # The first error says why; those after it are what followed (MariaDB: the storage
    # engine it then could not load, "Aborting").
    for line in useful:
        if any(word in line for word in ("[ERROR]", "FATAL", "ERROR:", "invalid value")):
            return line
    return useful[-1] if useful else "no output"


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie does not; a child of this worker is reaped)."""
    child = _children.get(pid)
    if child is not None and child.poll() is not None:
        _children.pop(pid, None)
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def pid_in(pid_file: str) -> int | None:
    try:
        return int(Path(pid_file).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def server_stop(pid: int, engine: str, timeout_s: float) -> None:
    """A clean shutdown (PostgreSQL's fast one), waited for; killed past the timeout."""
    sig = signal.SIGINT if engine == "postgresql" else signal.SIGTERM
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    deadline = time.monotonic() + timeout_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)


def include_read(path: str) -> str | None:
    """The include as it is; None when there is none."""
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        return None


def include_write(path: str, text: str | None) -> None:
    """Write the include whole (a temporary file renamed over it), or remove it (None)."""
    target = Path(path)
    if text is None:
        target.unlink(missing_ok=True)
        return
    temporary = target.with_name(f".{target.name}.benchdash")
    temporary.write_text(text)
    temporary.chmod(0o644)
    os.replace(temporary, target)


def command_run(argv: tuple[str, ...], timeout_s: float) -> tuple[int, str]:
    """A service's restart command, without a shell; its exit code and its output."""
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return -1, f"{argv[0]} did not finish within {timeout_s:g} s"
    except OSError as e:
        return -1, f"{argv[0]}: {e.strerror}"
    return done.returncode, (done.stdout + done.stderr).decode(errors="replace")
