"""A target's server host over SSH, for its restarts (the `ServerShell` of
server_shell.py): constant scripts run with shlex-quoted arguments, files read and written
over SFTP, one connection with the pinned host key kept while a restart goes on and
opened again when it dropped. Nothing here parses user text in a shell."""

from __future__ import annotations

import contextlib
import os
import posixpath
import shlex
from collections.abc import Iterator, Sequence

import paramiko

from runs.loadhosts import ssh
from runs.loadhosts.remote_scripts import remote_command
from runs.loadhosts.server_shell import (
    KILL_WAIT_S,
    MAX_READ,
    SIGNALS,
    STOP_POLL_S,
    TESTS,
    ShellError,
    proc_state,
)

TEST_SCRIPT = 'test "-$1" "$2"'
FIRST_PROGRAM_SCRIPT = r"""
for p do
  if [ -f "$p" ] && [ -x "$p" ]; then printf '%s\n' "$p"; exit 0; fi
done
exit 1
"""
# The server in a session of its own (setsid: not a group leader here, so it does not
# fork and $! is the server's id), stdin from /dev/null and its output in its log, so it
# outlives this channel; the log made first and given to the owner, who reopens it.
START_SCRIPT = r"""
set -u
log=$1 dir=$2 owner=$3
shift 3
cd "$dir" || exit 2
: >"$log" || exit 2
if [ -n "$owner" ]; then chown "$owner" "$log" || exit 2; fi
setsid "$@" </dev/null >>"$log" 2>&1 &
echo "$!"
"""
STAT_SCRIPT = 'cat "/proc/$1/stat" 2>/dev/null || true'
# A clean shutdown waited for there, KILL past its time: one round trip, not one a poll.
STOP_SCRIPT = r"""
set -u
pid=$1 sig=$2 ticks=$3 kill_ticks=$4
gone() {
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 0
  state=${stat##*) }
  [ "${state%% *}" = Z ]
}
kill -s "$sig" "$pid" 2>/dev/null
i=0
while ! gone && [ "$i" -lt "$ticks" ]; do sleep 0.2; i=$((i + 1)); done
gone && exit 0
kill -s KILL "$pid" 2>/dev/null
i=0
while ! gone && [ "$i" -lt "$kill_ticks" ]; do sleep 0.2; i=$((i + 1)); done
gone
"""


class SSHShell:
    """The server host of a target, reached over SSH with its pinned host key."""

    def __init__(self, host: ssh.SSHHost) -> None:
        self.host = host
        self.where = f"server host {host.name} ({host.where})"
        self._transport: paramiko.Transport | None = None
        self._uid: int | None = None

    # --- commands ---------------------------------------------------------------------------

    def _connection(self) -> paramiko.Transport:
        if self._transport is None or not self._transport.is_active():
            self.close()
            try:
                self._transport = ssh.connect(self.host)
            except ssh.SSHError as e:
                raise ShellError(str(e)) from None
        return self._transport

    def _script(self, script: str, *args: str, timeout: float | None = None) -> ssh.CommandResult:
        return self._command(remote_command(script, *args), timeout)

    def _command(self, command: str, timeout: float | None = None) -> ssh.CommandResult:
        try:
            return ssh.run(self.host, self._connection(), command, timeout=timeout)
        except ssh.SSHError as e:
            raise ShellError(f"on {self.where}: {e}") from None

    def uid(self) -> int:
        if self._uid is None:
            result = self._command("id -u")
            if result.exit_code != 0 or not result.stdout.strip().isdigit():
                raise ShellError(f"cannot tell which user logs in to {self.where}")
            self._uid = int(result.stdout.strip())
        return self._uid

    def test(self, path: str, what: str) -> bool:
        if what not in TESTS:
            raise ValueError(what)
        return self._script(TEST_SCRIPT, what, path).exit_code == 0

    def first_program(self, paths: Sequence[str]) -> str:
        result = self._script(FIRST_PROGRAM_SCRIPT, *paths)
        return result.stdout.strip() if result.exit_code == 0 else ""

    def start(
        self, argv: Sequence[str], *, cwd: str, log: str, owner: tuple[int, int] | None
    ) -> int:
        words = list(argv)
        if owner is not None:  # the SSH user is root: the server runs as its data's owner
            uid, gid = owner
            words = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *words]
        result = self._script(
            START_SCRIPT, log, cwd, f"{owner[0]}:{owner[1]}" if owner else "", *words
        )
        pid = result.stdout.strip()
        if result.exit_code != 0 or not pid.isdigit():
            raise ShellError(
                f"cannot start {argv[0]} on {self.where} in {cwd}: {result.stderr.strip()}"
            )
        return int(pid)

    def alive(self, pid: int) -> bool:
        return proc_state(self._script(STAT_SCRIPT, str(int(pid))).stdout) not in ("", "Z")

    def stop(self, pid: int, name: str, timeout: float) -> None:
        if name not in SIGNALS:
            raise ValueError(name)
        ticks, kill_ticks = (str(int(s / STOP_POLL_S)) for s in (timeout, KILL_WAIT_S))
        waits = timeout + KILL_WAIT_S + self.host.timeout
        self._script(STOP_SCRIPT, str(int(pid)), name, ticks, kill_ticks, timeout=waits)

    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, str]:
        try:
            result = self._command(shlex.join(argv), timeout)
        except ShellError as e:
            return -1, str(e)
        output = "\n".join(filter(None, [result.stdout, result.stderr]))
        return result.exit_code, output

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    # --- files ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _sftp(self, what: str) -> Iterator[paramiko.SFTPClient]:
        try:
            sftp = self._connection().open_sftp_client()
            if sftp is None:
                raise ShellError(f"{self.where} offers no SFTP")
            try:
                sftp.get_channel().settimeout(self.host.timeout)
                yield sftp
            finally:
                sftp.close()
        except FileNotFoundError:
            raise
        except (paramiko.SSHException, OSError, EOFError) as e:
            raise ShellError(f"cannot {what} on {self.where}: {e}") from None

    def owner(self, path: str) -> tuple[int, int] | None:
        try:
            with self._sftp(f"read {path}") as sftp:
                stat = sftp.stat(path)
        except FileNotFoundError:
            return None
        return int(stat.st_uid or 0), int(stat.st_gid or 0)

    def realpath(self, path: str) -> str:
        try:
            with self._sftp(f"resolve {path}") as sftp:
                return sftp.normalize(path)
        except (FileNotFoundError, ShellError):
            return posixpath.normpath(path)

    def read(self, path: str, offset: int = 0) -> str | None:
        try:
            with self._sftp(f"read {path}") as sftp, sftp.open(path, "rb") as f:
                f.seek(offset)
                return bytes(f.read(MAX_READ)).decode(errors="replace")
        except FileNotFoundError:
            return None

    def size(self, path: str) -> int | None:
        try:
            with self._sftp(f"read {path}") as sftp:
                return sftp.stat(path).st_size
        except (FileNotFoundError, ShellError):
            return None

    def write_whole(
        self,
        path: str,
        text: str | None,
        *,
        mode: int = 0o644,
        owner: tuple[int, int] | None = None,
    ) -> None:
        with self._sftp(f"write {path}") as sftp:
            if text is None:
                with contextlib.suppress(FileNotFoundError):
                    sftp.remove(path)
                return
            folder, name = os.path.split(path)
            temporary = posixpath.join(folder, f".{name}.benchdash")
            with sftp.open(temporary, "wb") as f:
                # Its mode and owner before its text: it is made empty, with the server's umask.
                f.chmod(mode)
                if owner is not None:
                    f.chown(*owner)
                f.write(text.encode())
            sftp.posix_rename(temporary, path)
