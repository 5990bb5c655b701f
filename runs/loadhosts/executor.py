"""What every executor is: it starts a sysbench command on a load host and hands back a
process whose output lines arrive as they are printed. The password travels in a config
file in a private directory (0700, file 0600), never on the command line, and the
directory is removed when the process ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from runs.errors import ExecutorError
from runs.sysbench.command import SysbenchCommand

__all__ = [
    "CONFIG_DIR_PREFIX",
    "CommandFactory",
    "Executor",
    "ExecutorError",  # at home in runs/errors.py, which the pages and the API catch
    "StagedStart",
    "SysbenchProcess",
    "lines_of",
]

CommandFactory = Callable[[str], SysbenchCommand]
# sysbench's private directory on a local load host: tempfile.gettempdir()/benchdash-XXXX
CONFIG_DIR_PREFIX = "benchdash-"


class SysbenchProcess(Protocol):
    command: SysbenchCommand
    pgid: int
    stderr_lines: list[str]
    config_dir: str  # its private directory on the load host, removed when it ends

    def read(self, timeout: float) -> list[str] | None:
        """Wait up to `timeout` seconds for output; the complete lines printed meanwhile
        ([] if none), or None once the output has ended."""
        ...

    def lines(self, tick: float) -> Iterator[str | None]:
        """Output lines as they come; None every `tick` seconds of silence."""
        ...

    def kill(self) -> None: ...

    def wait(self) -> int: ...


class StagedStart(Protocol):
    """sysbench ready to start on its load host: connected, its private directory and
    files in place. `go()` starts it at once, so that several hosts start together."""

    command: SysbenchCommand
    config_dir: str

    def go(self) -> SysbenchProcess: ...

    def abandon(self) -> None:
        """Never started: its directory goes."""
        ...


class Executor(Protocol):
    host_name: str
    sysbench: str

    def start(
        self, make_command: CommandFactory, files: Mapping[str, str] | None = None
    ) -> SysbenchProcess:
        """Start sysbench; `files` (name → text) go into its private directory, next to
        the config file whose path make_command receives."""
        ...

    def stage(
        self, make_command: CommandFactory, files: Mapping[str, str] | None = None
    ) -> StagedStart: ...

    def facts(self) -> dict[str, object]: ...

    def sysbench_version(self) -> str | None: ...

    def kill_group(self, pgid: int) -> bool: ...

    def remove_config_dir(self, path: str) -> bool:
        """Remove the private directory of a sysbench whose worker died."""
        ...


def lines_of(process: SysbenchProcess, tick: float) -> Iterator[str | None]:
    """A process's output line by line, None every `tick` seconds of silence."""
    while (lines := process.read(tick)) is not None:
        if not lines:
            yield None
        yield from lines
