"""Who runs uploaded code on this machine, and what is left of it afterwards.

Loading an uploaded Lua script (option discovery, script_probe.py) and running it on the
local load host (local.py) run its code. When the service runs as root, that code runs as
an account of its own (BENCHDASH_SCRIPT_ACCOUNT, `benchdash-script`, made by
scripts/bootstrap): no supplementary groups, in a directory of its own (0700, under a
root-owned parent that others cannot list), with an environment of four variables, in a
session and process group of its own. It reads nothing of the service: var/ is 0700 (held
here: a var/ open to other accounts refuses the script) and scripts/bootstrap denies the
account the checkout with an ACL. When it ends, its whole group is killed, then what it
left where every account may write: its orphans (children of PID 1, whatever group they
moved to) and its files in the shared temporary directories.

A service that is not root cannot switch accounts: the script then runs as the service's
own user, which reads the keys; so uploaded code is loaded only where the operator said so
(BENCHDASH_LOCAL_SCRIPTS set to true; off by default for a service that is not root).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from runs.errors import ExecutorError

_SCRIPTS_DIR = "benchdash-scripts"  # the private directories' parent, in the temp directory
# Where every account may write: what the scripts' account leaves there is removed.
_SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")  # noqa: S108 - swept, never written
_GONE_WITHIN_S = 5.0


@dataclass(frozen=True)
class ScriptAccount:
    """The account a script runs as: its own (uid, gid), or the service's (None)."""

    uid: int | None = None
    gid: int | None = None

    @property
    def separate(self) -> bool:
        return self.uid is not None

    def popen_options(self) -> dict[str, Any]:
        """subprocess.Popen's switch of account: Python's own setgroups, setregid and
        setreuid between fork and exec, which is safe beside the worker's threads (a
        preexec_fn is not) and needs no other program on the machine."""
        if self.uid is None:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def directory(self, prefix: str) -> Path:
        """A private directory (0700) for the script, owned by the account."""
        if self.uid is None or self.gid is None:
            return Path(tempfile.mkdtemp(prefix=prefix))
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=_scripts_root()))
        os.chown(path, self.uid, self.gid)
        return path

    def hand_over(self, directory: Path) -> None:
        """The files the service wrote in the directory, to the account (0600 stays)."""
        if self.uid is None or self.gid is None:
            return
        for entry in directory.iterdir():
            os.chown(entry, self.uid, self.gid, follow_symlinks=False)

    def end(self, popen: subprocess.Popen[Any]) -> None:
        """After the script's leader has exited (waited for, not yet reaped): the rest of
        its group, then what it left behind."""
        try:
            os.waitid(os.P_PID, popen.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass  # reaped already: its group id may be another's now, not signalled
        else:
            end_group(popen.pid)
            # Until they are gone: a member's own children are orphaned only then.
            _kill_until_gone(lambda: [p.pid for p in _processes() if p.pgrp == popen.pid])
        self.sweep()

    def sweep(self) -> None:
        """The account's orphans killed, its files in the shared temporary directories
        removed: nothing of a script outlives it (the account runs nothing else)."""
        if self.uid is None:
            return  # the service's own user: its other processes and files are not ours
        uid = self.uid
        # A killed orphan's children are orphans in turn: looked for until none is left.
        _kill_until_gone(lambda: [p.pid for p in _processes() if p.uid == uid and p.ppid == 1])
        for directory in dict.fromkeys((tempfile.gettempdir(), *_SHARED_TMP)):
            _remove_owned(Path(directory), self.uid)


def script_account(*, discovery: bool = False) -> ScriptAccount:
    """The account of uploaded code here; ExecutorError when it cannot run safely.
    `discovery`: loading an uploaded script, which a service that is not root does only
    where the operator allowed scripts to run as its own user."""
    from django.conf import settings

    if os.geteuid() != 0:
        if discovery and not settings.BENCHDASH_LOCAL_SCRIPTS:
            raise ExecutorError(
                "uploaded scripts are loaded as their own account, and this service is not "
                "root so cannot switch to it: run it as root (scripts/bootstrap makes the "
                "account), or set BENCHDASH_LOCAL_SCRIPTS=true to let scripts run as "
                f"{pwd.getpwuid(os.geteuid()).pw_name}, which reads benchdash's keys"
            )
        return ScriptAccount()
    name = settings.BENCHDASH_SCRIPT_ACCOUNT
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise ExecutorError(
            f"uploaded scripts run as the account {name}, which this machine does not have: "
            "run scripts/bootstrap"
        ) from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise ExecutorError(f"the account {name} of uploaded scripts is root's: give it its own")
    _check_private(Path(settings.VAR_DIR))
    return ScriptAccount(entry.pw_uid, entry.pw_gid)


def end_group(pgid: int) -> None:
    """SIGKILL to a script's process group: call while its leader is a zombie not yet
    reaped, so that the group id is still its own."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _check_private(var_dir: Path) -> None:
    try:
        mode = var_dir.stat().st_mode
    except FileNotFoundError:
        return  # nothing kept there yet
    if mode & 0o007:
        raise ExecutorError(
            f"{var_dir} (benchdash's keys and logs) is open to other accounts, so to "
            f"uploaded scripts: chmod 700 {var_dir} (scripts/bootstrap does)"
        )


def _scripts_root() -> Path:
    """The parent of the scripts' directories: root's, 0711, so a script finds its own
    directory and cannot list the others'. Made once; refused if someone else made it."""
    root = Path(tempfile.gettempdir()) / _SCRIPTS_DIR
    try:
        os.mkdir(root, 0o711)
        os.chmod(root, 0o711)  # noqa: S103 - traversed by the account, listed by nobody
    except FileExistsError:
        pass
    found = os.lstat(root)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != 0 or found.st_mode & 0o066:
        raise ExecutorError(f"{root} is not root's private directory: remove it")
    return root


class _Process(NamedTuple):
    pid: int
    uid: int
    ppid: int
    pgrp: int


def _processes() -> Iterator[_Process]:
    """The machine's live processes (zombies have exited: not counted). An orphan is
    adopted by PID 1: a running script is always the child of a service or of a script."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "status").read_text()
            fields = dict(line.split(":", 1) for line in text.splitlines())
            if fields["State"].split()[0] in ("Z", "X"):
                continue
            yield _Process(
                int(entry.name),
                int(fields["Uid"].split()[0]),
                int(fields["PPid"]),
                int(fields["NSpgid"].split()[0]),
            )
        except (OSError, ValueError, KeyError):
            continue  # gone meanwhile


def _kill_until_gone(find: Callable[[], list[int]]) -> None:
    """SIGKILL to what `find` finds, again until it finds nothing (a killed process takes
    a moment to exit, longer on a loaded machine), for at most _GONE_WITHIN_S."""
    deadline = time.monotonic() + _GONE_WITHIN_S
    while (found := find()) and time.monotonic() < deadline:
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


def _remove_owned(directory: Path, uid: int) -> None:
    """The entries of `directory` (not below) that belong to the account. rmtree works
    through directory descriptors, so a link swapped in meanwhile is never followed."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
