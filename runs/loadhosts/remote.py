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
from runs.loadhosts.remote_scripts import (
    FACTS_SCRIPT,
    KILL_SCRIPT,
    REMOVE_DIR_SCRIPT,
    RUN_WRAPPER,
    SWEEP_DIRS_SCRIPT,
    remote_command,
)
from runs.loadhosts.tuning import TUNING_SCRIPT, tuning_facts
from runs.sysbench.command import SysbenchCommand

logger = logging.getLogger(__name__)


# On a remote host sysbench is looked up on the PATH of the SSH user: BENCHDASH_SYSBENCH
# names a program on the worker's own machine.
REMOTE_SYSBENCH = "sysbench"
CONFIG_NAME = "sysbench.cfg"  # in the private directory, which is sysbench's working dir
START_MARKER = "benchdash-"
STATUS_WAIT_S = 5.0  # for sysbench's exit status once its output has ended


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
        # The output ended without an exit status: the wrapper and its directory may
        # still be on the load host.
        self.connection_lost = False

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
            # The exit status comes after the output ends; none (paramiko says -1 when
            # the channel closed without one): the connection ended under sysbench.
            if reader.exit_code(STATUS_WAIT_S) == -1:
                self.connection_lost = True
                lost = (
                    f"FATAL: the SSH connection to load host {self._executor.host_name} was "
                    f"lost at {time.strftime('%H:%M:%S', time.gmtime())} UTC"
                )
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
            self.sweep_private_dirs(transport)
            timeout = self.host.timeout
            reader = ssh.open_command(
                transport, remote_command(RUN_WRAPPER, *command.argv), timeout
            )
            directory, _ = self._expect(reader, "dir")
            staged = {CONFIG_NAME: command.config_text, **(files or {})}
            ssh.upload_all(
                self.host, transport, {f"{directory}/{n}": text for n, text in staged.items()}
            )
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
        result = self._run(f"{FACTS_SCRIPT}\necho {TUNING_MARK}\n{TUNING_SCRIPT}")
        facts, _, tuning = result.stdout.partition(f"\n{TUNING_MARK}\n")
        return {"host": self.host_name, **_parse_facts(facts), **tuning_facts(tuning)}

    def sysbench_version(self) -> str | None:
        result = self._run(f"{shlex.quote(self.sysbench)} --version")
        if result.exit_code != 0:
            return None
        return result.stdout.strip() or None

    def kill_group(self, pgid: int, transport: paramiko.Transport | None = None) -> bool:
        command = remote_command(KILL_SCRIPT, str(int(pgid)))
        return self._run(command, transport).exit_code == 0

    def sweep_private_dirs(self, transport: paramiko.Transport | None = None) -> list[str]:
        """Remove what earlier runs on this host left (their sysbench is gone); the paths."""
        result = self._run(remote_command(SWEEP_DIRS_SCRIPT), transport)
        swept = result.stdout.split()
        if swept:
            logger.warning("load host %s: removed left directories %s", self.host_name, swept)
        return swept

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


# Between the facts and the tuning's files in what the facts' script prints.
TUNING_MARK = "benchdash-tuning"


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
