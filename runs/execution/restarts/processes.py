"""The server processes a restart stops and starts, on the database server's machine: its
server host over SSH when the target names one, else the worker's own (`target_shell`).
A managed instance's binary found in its install, started in a session of its own as the
owner of its data directory with its log beside its data, stopped; a service's own error
log read from where a restart began; the server's own error line picked from a log.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from runs import credentials
from runs.execution.restarts.spec import (
    Install,
    Options,
    RestartSpec,
    options_file,
    options_file_text,
)
from runs.loadhosts import ServerShell, ShellError, server_shell
from runs.models import Target

LOG_NAME = "benchdash-server.log"  # in the data directory: the output of the last start
LOCAL_HOSTS = frozenset({"", "localhost", "127.0.0.1", "::1"})
SERVER_PROGRAMS = frozenset({"mariadbd", "mysqld", "postgres"})


class RestartFailed(Exception):
    """A server that did not start or stop; the message is the server's own line."""


def shell_refused(target: Target) -> str:
    """Why the restarts of `target` cannot run anywhere; "" when they can."""
    if target.server_host is None and target.host not in LOCAL_HOSTS:
        return (
            f"{target.name} runs on {target.host}, not on the worker's machine: give it a "
            "server host (an SSH host on the database server) to restart it there"
        )
    return ""


def target_shell(target: Target | None) -> ServerShell:
    """Where the restarts of `target` run: its server host over SSH, else this machine."""
    return server_shell(target.server_host if target is not None else None)


def server_binary(shell: ServerShell, engine: str, install: Install) -> str:
    names = ("postgres",) if engine == "postgresql" else ("mariadbd", "mysqld")
    found = shell.first_program(
        [f"{install.basedir}/{sub}/{name}" for sub in ("bin", "sbin", "libexec") for name in names]
    )
    if not found:
        raise RestartFailed(f"no {names[0]} in {install.basedir}/bin or sbin on {shell.where}")
    return found


def server_launch(
    shell: ServerShell,
    engine: str,
    install: Install,
    *,
    port: int | None,
    socket: str,
    options: Options,
) -> tuple[int, str]:
    """Start the install's server in a session of its own (it outlives the worker and the
    connection), as the owner of its data directory when the shell's user is root: its
    process id and the binary that runs. `options` reach it in a file of that owner's
    (0600), written before and removed when there are none (the original put back)."""
    binary = server_binary(shell, engine, install)
    owner = shell.owner(install.datadir)
    if owner is None:
        raise RestartFailed(f"no data directory {install.datadir} on {shell.where}")
    root = shell.uid() == 0
    as_owner = owner if root and owner[0] != 0 else None
    path = options_file(engine, install)
    text = options_file_text(engine, install, options) if options.pairs else None
    shell.write_whole(path, text, mode=0o600, owner=as_owner)
    argv = server_argv(
        engine, install, binary, port=port, socket=socket, options_file=path if text else "",
        as_root=root,
    )  # fmt: skip
    log = f"{install.datadir}/{LOG_NAME}"
    return shell.start(argv, cwd=install.datadir, log=log, owner=as_owner), binary


def server_argv(
    engine: str,
    install: Install,
    binary: str,
    *,
    port: int | None,
    socket: str,
    options_file: str,
    as_root: bool,
) -> list[str]:
    """The start command: the install's config (or none), its data, the target's port;
    `options_file`: the config benchdash wrote, which includes the install's; `as_root`:
    root starts it, and the data directory is root's (MariaDB must be told). Nothing of a
    plan's: what a command line says, every account of the machine reads."""
    log = f"{install.datadir}/{LOG_NAME}"
    config = options_file or install.config
    if engine == "postgresql":
        argv = [binary, "-D", install.datadir]
        if config:
            argv += ["-c", f"config_file={config}"]
        argv += ["-c", "logging_collector=off"]  # its log: this start's output
        if port:
            argv += ["-p", str(port)]
        return argv
    # MariaDB reads --no-defaults and --defaults-file only as its first option.
    argv = [binary, f"--defaults-file={config}" if config else "--no-defaults"]
    if as_root:
        argv.append("--user=root")
    argv += [f"--basedir={install.basedir}", f"--datadir={install.datadir}", f"--log-error={log}"]
    if port:
        argv.append(f"--port={port}")
    if socket:
        argv.append(f"--socket={socket}")
    return argv


def server_log(shell: ServerShell, install: Install) -> str:
    return shell.read(f"{install.datadir}/{LOG_NAME}") or ""


def install_at(shell: ServerShell, spec: RestartSpec, datadir: str) -> Install:
    """The install whose data directory the server runs from."""
    here = shell.realpath(datadir.rstrip("/"))
    for install in spec.installs:
        if shell.realpath(install.datadir.rstrip("/")) == here:
            return install
    raise RestartFailed(f"the server runs from {datadir}, the data directory of no install")


def first_error(text: str) -> str:
    """The first line of `text` that says why a server did not start; "" for none."""
    for line in (x.strip() for x in text.splitlines()):
        if line.endswith(("Aborting", "database system is shut down")):
            continue  # what followed the error, not why
        # MariaDB's "[ERROR]"; PostgreSQL's "FATAL:" (or "ERROR:" before it stops).
        if any(word in line for word in ("[ERROR]", "FATAL", "ERROR:", "invalid value")):
            return line
    return ""


def error_line(text: str) -> str:
    """The server's own line saying why it did not start: its first error (those after
    it are what followed: MariaDB's storage engine it then could not load, "Aborting"),
    else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [x for x in lines if not x.endswith(("Aborting", "database system is shut down"))]
    return first_error(text) or (useful[-1] if useful else "no output")


def log_size(shell: ServerShell, path: str) -> int:
    """Where a log ends now (0 for none): what a restart writes comes after."""
    return (shell.size(path) or 0) if path else 0


def errors_since(shell: ServerShell, path: str, offset: int) -> str:
    """The first error line written to a log past `offset`; "" for none, no log, or one
    that cannot be read (the restart command's output is said then). A log shorter than
    that was rotated: all of it is new."""
    if not path:
        return ""
    try:
        size = shell.size(path) or 0
        return first_error(shell.read(path, offset if size >= offset else 0) or "")
    except ShellError:
        return ""


def pid_in(shell: ServerShell, pid_file: str) -> int | None:
    try:
        return int((shell.read(pid_file) or "").split()[0])
    except (ValueError, IndexError):
        return None


def server_stop(shell: ServerShell, pid: int, engine: str, timeout_s: float) -> None:
    """A clean shutdown (PostgreSQL's fast one), waited for; killed past the timeout."""
    shell.stop(pid, "INT" if engine == "postgresql" else "TERM", timeout_s)


@dataclass(frozen=True)
class StartedAs:
    """How the server running now was started: its command line and working directory,
    to start it again as it was found; `why_not` when it cannot be (argv empty)."""

    argv: tuple[str, ...] = ()
    cwd: str = ""
    why_not: str = ""


def started_as(shell: ServerShell, pid: int | None) -> StartedAs:
    """The running server's own start (/proc/<pid>/cmdline and cwd): its owner's options
    on its command line come back with it. Not when it is not a server binary by an
    absolute path, or a word of it holds a credential (kept on the batch: never one)."""
    if not pid:
        return StartedAs(why_not="the server says no pid file")
    text = shell.read(f"/proc/{pid}/cmdline") or ""
    argv = tuple(text[:-1].split("\0")) if text.endswith("\0") else ()
    if not argv or not argv[0].startswith("/"):
        return StartedAs(why_not=f"process {pid}'s command line cannot be read")
    if posixpath.basename(argv[0]) not in SERVER_PROGRAMS:
        return StartedAs(why_not=f"process {pid} is {posixpath.basename(argv[0])}, no server")
    for word in argv[1:]:
        name, _, value = word.lstrip("-").partition("=")
        if credentials.secret_line(name, value):
            return StartedAs(why_not="its command line holds a credential")
    return StartedAs(argv=argv, cwd=shell.realpath(f"/proc/{pid}/cwd"))


def server_relaunch(shell: ServerShell, engine: str, install: Install, start: StartedAs) -> int:
    """The original started again as it was found (`started_as`), in a session of its
    own, as the owner of its data directory; benchdash's options file removed."""
    owner = shell.owner(install.datadir)
    if owner is None:
        raise RestartFailed(f"no data directory {install.datadir} on {shell.where}")
    as_owner = owner if shell.uid() == 0 and owner[0] != 0 else None
    shell.write_whole(options_file(engine, install), None, mode=0o600, owner=as_owner)
    log = f"{install.datadir}/{LOG_NAME}"
    return shell.start(start.argv, cwd=start.cwd or install.datadir, log=log, owner=as_owner)
