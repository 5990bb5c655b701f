"""SSH load hosts: sysbench started on a remote machine through a fixed wrapper script,
followed over the SSH channel, and the remote machine's facts."""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Iterator, Mapping

import paramiko

from runs.loadhosts import ssh
from runs.loadhosts.executor import CommandFactory, ExecutorError, lines_of
from runs.sysbench.command import SysbenchCommand

logger = logging.getLogger(__name__)


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


# Removes the private directory $1 of a sysbench whose worker died (the wrapper removes it
# itself when sysbench ends, unless the wrapper was killed too). Only a directory the
# wrapper makes: benchdash.XXXXXXXXXX in the temporary directory. Exit 3: none there.
REMOVE_DIR_SCRIPT = r"""
dir=$1
case ${dir##*/} in benchdash.??????????) ;; *) exit 2 ;; esac
[ "${dir%/*}" = "${TMPDIR:-/tmp}" ] || exit 2
[ -d "$dir" ] || exit 3
rm -rf -- "$dir"
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
        config_dir: str,
    ) -> None:
        self.command = command
        self.pgid = pgid
        self.config_dir = config_dir
        self.stderr_lines: list[str] = []
        self._executor = executor
        self._transport = transport
        self._reader = reader
        self._pending = pending  # lines that came with the wrapper's markers
        self._ended = False
        self._waited = False

    def read(self, timeout: float) -> list[str] | None:
        """Wait up to `timeout` s on the channel; the complete lines meanwhile, [] if
        none, None once the remote output has ended and all of it was handed on."""
        if self._pending:
            lines, self._pending = self._pending, []
            return lines
        reader = self._reader
        if self._ended:
            return None
        if reader.done:
            self._ended = True
            lines = list(self._take(final=True))
            if not reader.channel.status_event.is_set() and not self._transport.is_active():
                lost = f"FATAL: the SSH connection to {self._executor.host_name} was lost"
                self.stderr_lines.append(lost)
                lines.append(lost)
            return lines
        reader.pump(max(0.0, timeout))
        return list(self._take(final=False))

    def lines(self, tick: float) -> Iterator[str | None]:
        return lines_of(self, tick)

    def _take(self, final: bool) -> Iterator[str]:
        yield from self._reader.stdout_lines(final)
        for line in self._reader.stderr_lines(final):
            self.stderr_lines.append(line)
            yield line

    def kill(self) -> None:
        if self._waited:
            return  # it ended, and the wrapper removed its directory
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
            self._waited = True
            self._transport.close()


class StagedSSH:
    """The wrapper on a load host with sysbench's files in place, waiting for its go."""

    def __init__(
        self,
        executor: SSHExecutor,
        transport: paramiko.Transport,
        reader: ssh.ChannelReader,
        command: SysbenchCommand,
        config_dir: str,
    ) -> None:
        self.executor = executor
        self.command = command
        self.config_dir = config_dir
        self._transport = transport
        self._reader = reader

    def go(self) -> SSHProcess:
        try:
            self._reader.channel.sendall(b"go\n")
            self._reader.channel.shutdown_write()
            pgid, pending = self.executor._expect(self._reader, "pgid")
            if not pgid.isdigit():
                raise ExecutorError(
                    f"the wrapper on {self.executor.host_name} printed no process group id"
                )
        except (ssh.SSHError, paramiko.SSHException, OSError) as e:
            self._transport.close()
            raise ExecutorError(str(e)) from None
        except BaseException:
            self._transport.close()
            raise
        return SSHProcess(
            self.command,
            self.executor,
            self._transport,
            self._reader,
            int(pgid),
            pending,
            self.config_dir,
        )

    def abandon(self) -> None:
        """Never started: the wrapper sees its stdin end and removes the directory."""
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
        return self.stage(make_command, files).go()

    def stage(
        self, make_command: CommandFactory, files: Mapping[str, str] | None = None
    ) -> StagedSSH:
        """Connect, make sysbench's private directory and upload its files, and stop
        there: `go()` starts sysbench at once, so several hosts can start together."""
        command = make_command(f"./{CONFIG_NAME}")
        transport = self._connect()
        try:
            timeout = self.host.timeout
            reader = ssh.open_command(
                transport, remote_command(RUN_WRAPPER, *command.argv), timeout
            )
            directory, _ = self._expect(reader, "dir")
            for name, text in {CONFIG_NAME: command.config_text, **(files or {})}.items():
                ssh.upload(self.host, transport, f"{directory}/{name}", text)
            return StagedSSH(self, transport, reader, command, directory)
        except ssh.SSHError as e:
            transport.close()
            raise ExecutorError(str(e)) from None
        except BaseException:
            transport.close()
            raise

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

    def remove_config_dir(self, path: str) -> bool:
        result = self._run(remote_command(REMOVE_DIR_SCRIPT, path))
        if result.exit_code == 2:
            raise ExecutorError(f"{path!r} is not a private directory of sysbench")
        return result.exit_code == 0

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
