"""A batch's cells: the axes a plan varies and one cell of the matrix, and where in a
batch's order its server needs a prepare, a cleanup or a restart.

runs/sysbench/matrix.py expands a plan into these cells. Pure: no Django, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.errors import InvalidInput
from runs.sysbench.values import clean_options, render_value

DATASET_POLICIES = ("shared", "fresh")


@dataclass(frozen=True)
class Axes:
    threads: list[int]
    server_settings: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, list[object]] = field(default_factory=dict)  # whitelisted options


@dataclass(frozen=True)
class TestSpec:
    """One test of a tests axis, with its own fixed options over the plan's."""

    test: str
    options: Mapping[str, object] = field(default_factory=dict)
    family: str = ""  # how the relative table groups it: "point", "range", "write"...
    # A data set of its own, prepared afresh before its cells, rather than the one the
    # tests before it shared (a writer that must not see another writer's changes).
    rebuild: bool = False


@dataclass(frozen=True)
class ServerAxes:
    """The axes that change the server rather than the load: several targets (the first is
    the baseline), installs (versions) and config files of a target benchdash may restart."""

    targets: tuple[int, ...] = ()  # target ids; none or one: no servers axis
    installs: tuple[str, ...] = ()  # install labels of a managed target
    configs: tuple[str, ...] = ()  # config labels
    restart_settings: frozenset[str] = frozenset()  # settings that need a restart to change


# The axes beyond threads, settings and options a cell's identity may name.
SERVER_AXES = ("target", "install", "config")


@dataclass(frozen=True)
class Cell:
    position: int  # 0-based order of execution in the batch
    round: int  # repeat number, 0-based
    threads: int
    settings: dict[str, str]
    options: dict[str, object]  # fixed options + this cell's option-axis values + "threads"
    dataset: tuple[str, ...]  # command.dataset_key(); () when the test has no data set
    axis_options: tuple[str, ...] = ()  # names of the options that come from an axis
    test: str = ""
    target: int | None = None  # the target's id; None: the plan's one target
    install: str = ""
    config: str = ""
    axes: tuple[str, ...] = ()  # which of "test", "target", "install", "config" vary
    restart_key: tuple[str, ...] = ()  # what a restart changes: install, config, settings
    test_options: tuple[str, ...] = ()  # names of the options that come from its test's item

    @property
    def server(self) -> tuple[int | None, str]:
        """The server whose data set this cell uses: a target, and an install's datadir."""
        return (self.target, self.install)

    @property
    def label(self) -> str:
        """For people: "threads=2 innodb_flush_log_at_trx_commit=1 sync_binlog=0"."""
        parts = [f"test={self.test}"] if "test" in self.axes else []
        parts += [f"{name}={value}" for name, value in self._test_values().items()]
        parts += [f"{name}={getattr(self, name)}" for name in SERVER_AXES if name in self.axes]
        parts += [f"threads={self.threads}"]
        parts += [f"{name}={self.settings[name]}" for name in sorted(self.settings)]
        parts += [f"{name}={value}" for name, value in self._axis_values().items()]
        return " ".join(parts)

    @property
    def run_options(self) -> dict[str, object]:
        """The options as a Run stores them: its threads are Run.threads, never an option."""
        return {name: value for name, value in self.options.items() if name != "threads"}

    def key(self) -> str:
        """The identity of the cell, the same in every round: canonical JSON.

        Settings and options are kept apart so a server variable can never be mistaken
        for a sysbench option of the same name.
        """
        identity: dict[str, object] = {
            "threads": self.threads,
            "settings": self.settings,
            "options": self._axis_values(),
        }
        # Only the axes the plan has: a one-target, one-test plan keeps the keys its
        # nightly history was recorded under.
        identity.update({name: getattr(self, name) for name in self.axes})
        if self.test_options:
            # Two items of one test (oltp_read_only with ranges, and with sums) are two rows.
            identity["test_options"] = self._test_values()
        return json.dumps(identity, sort_keys=True, separators=(",", ":"))

    def _axis_values(self) -> dict[str, str]:
        return {name: _render(self.options[name]) for name in sorted(self.axis_options)}

    def _test_values(self) -> dict[str, str]:
        return {name: _render(self.options[name]) for name in sorted(self.test_options)}


REBUILD = "rebuild"  # the last part of the data-set key of a test that rebuilds its own


def rebuild_part(index: int) -> tuple[str, ...]:
    """What sets apart the data set of the tests axis's item `index` when it rebuilds."""
    return (f"{REBUILD}={index}",)


def rebuilds(dataset: Sequence[object]) -> bool:
    """Whether a data-set key is an item's that rebuilds it: prepared again before each of
    its runs, so that every repeat starts from the rows prepared (an insert grows them)."""
    return bool(dataset) and str(dataset[-1]).startswith(f"{REBUILD}=")


def item_index(
    tests: Sequence[Mapping[str, object]], test: str, test_options: Mapping[str, str]
) -> int | None:
    """Which item of a plan's tests axis a run measured: its test and its item's options
    (`Cell.key()["test_options"]`, rendered); None when no item matches."""
    for index, item in enumerate(tests):
        options = item.get("options")
        if item.get("test") != test or not isinstance(options or {}, Mapping):
            continue
        try:
            cleaned = clean_options(test, options or {})  # type: ignore[arg-type]
        except InvalidInput:
            continue
        if {name: _render(value) for name, value in cleaned.items()} == dict(test_options):
            return index
    return None


def cell_identity(cell_key: str) -> dict[str, Any]:
    """A stored cell key read back; {} when it is not one."""
    try:
        identity = json.loads(cell_key)
    except (TypeError, ValueError):
        return {}
    return identity if isinstance(identity, dict) else {}


def prepare_points(cells: Sequence[Cell], dataset_policy: str) -> list[int]:
    """Positions before which a prepare is needed on that cell's server.

    shared: where a server's data set changes (the first cell of each group of cells with
    the same data set on that server); fresh: every cell. Cells without a data set (cpu,
    memory, threads, mutex) need none. Several targets or installs: each is prepared
    before its own first cell of the group.
    """
    _check_choice("dataset_policy", dataset_policy, DATASET_POLICIES)
    fresh = dataset_policy == "fresh"
    points: list[int] = []
    live: dict[tuple[int | None, str], tuple[str, ...]] = {}
    for cell in cells:
        again = fresh or rebuilds(cell.dataset) or live.get(cell.server) != cell.dataset
        if cell.dataset and again:
            points.append(cell.position)
        live[cell.server] = cell.dataset
    return points


def cleanup_points(cells: Sequence[Cell], dataset_policy: str) -> list[int]:
    """Positions after which a cleanup is due on that cell's server: the mirror image of
    prepare_points."""
    _check_choice("dataset_policy", dataset_policy, DATASET_POLICIES)
    fresh = dataset_policy == "fresh"
    points: list[int] = []
    next_needed: dict[tuple[int | None, str], tuple[str, ...]] = {}
    for cell in reversed(cells):
        if cell.dataset and (fresh or next_needed.get(cell.server) != cell.dataset):
            points.append(cell.position)
        next_needed[cell.server] = cell.dataset
    return sorted(points)


def restart_points(cells: Sequence[Cell]) -> list[int]:
    """Positions before which the cell's server is (re)started with the cell's install,
    config and restart-only settings: where they differ from the last cell on that target.
    The first such cell of each target counts: what the server ran before is not known."""
    points: list[int] = []
    running: dict[int | None, tuple[str, ...]] = {}
    for cell in cells:
        if cell.restart_key and running.get(cell.target) != cell.restart_key:
            points.append(cell.position)
        running[cell.target] = cell.restart_key
    return points


def _check_choice(field_name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InvalidInput(field_name, f"{value!r} is not one of {', '.join(choices)}")


def _render(value: object) -> str:
    if isinstance(value, bool | int | float | str):
        return render_value(value)
    return str(value)
