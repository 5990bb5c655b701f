"""Expanding a plan's parameter matrix into the ordered list of runs of a batch.

A cell is one combination of axis values (threads, server settings, other options); a
batch runs every cell `repeats` times, one round after another. The order matters as
much as the cells: run all of one setting and then all of the other, and any drift of
the machine meanwhile (caches warming, a neighbour's backup, thermal throttling) shows
up as an effect of the setting. So the default order is interleaved: each round runs
every cell once, shuffled by a seeded generator so the order can be recorded and
replayed.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from runs.errors import InvalidInput
from runs.sysbench.command import clean_run_options, dataset_key, dataset_reusable
from runs.sysbench.options import OptionValue, validate_test
from runs.sysbench.values import clean_option, clean_options, render_value

ORDERS = ("interleaved", "ramp")
DATASET_POLICIES = ("shared", "fresh")
MAX_RUNS = 10_000  # cells x repeats; beyond that a batch would run for weeks

# Server variables: MySQL/MariaDB names, PostgreSQL names with a dot (auto_explain.*).
_SETTING_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,127}")
# Values such as ON, 2, 134217728, O_DIRECT, STRICT_TRANS_TABLES,NO_ZERO_DATE.
_SETTING_VALUE_RE = re.compile(r"[A-Za-z0-9_.,+-]{1,256}")


@dataclass(frozen=True)
class Axes:
    threads: list[int]
    server_settings: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, list[object]] = field(default_factory=dict)  # whitelisted options


@dataclass(frozen=True)
class Cell:
    position: int  # 0-based order of execution in the batch
    round: int  # repeat number, 0-based
    threads: int
    settings: dict[str, str]
    options: dict[str, object]  # fixed options + this cell's option-axis values + "threads"
    dataset: tuple[str, ...]  # command.dataset_key(); () when the test has no data set
    axis_options: tuple[str, ...] = ()  # names of the options that come from an axis

    @property
    def label(self) -> str:
        """For people: "threads=2 innodb_flush_log_at_trx_commit=1 sync_binlog=0"."""
        parts = [f"threads={self.threads}"]
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
        identity = {
            "threads": self.threads,
            "settings": self.settings,
            "options": self._axis_values(),
        }
        return json.dumps(identity, sort_keys=True, separators=(",", ":"))

    def _axis_values(self) -> dict[str, str]:
        return {name: _render(self.options[name]) for name in sorted(self.axis_options)}


@dataclass(frozen=True)
class _Combination:
    threads: int
    settings: dict[str, str]
    options: dict[str, OptionValue]
    dataset: tuple[str, ...]


def expand(
    *,
    test: str,
    fixed_options: Mapping[str, object],
    axes: Axes,
    repeats: int,
    order: str,
    seed: int,
    dataset_policy: str,
) -> list[Cell]:
    """Every run of a batch, in the order they are to run; raises InvalidInput.

    With the "shared" policy, cells sharing a data set are kept together so that one
    prepare serves them all: for each data set (in order of first appearance), every
    round runs its cells. With "fresh", each cell gets its own prepare from the caller,
    and rounds span the whole matrix.
    """
    test = validate_test(test)
    _check_policies(test, repeats, order, seed, dataset_policy)
    fixed = _fixed_options(test, fixed_options)
    threads = _threads_axis(test, axes.threads)
    settings = _settings_axes(axes.server_settings)
    options = _option_axes(test, axes.options, fixed)
    _check_size(len(threads), settings, options, repeats)
    combinations = _combinations(test, fixed, threads, settings, options)
    groups = _group(combinations) if dataset_policy == "shared" else [combinations]
    # A seeded, replayable shuffle is the point here; nothing depends on it being secret.
    rng = random.Random(seed)  # noqa: S311
    return _schedule(groups, repeats, order, rng, tuple(options))


def prepare_points(cells: Sequence[Cell], dataset_policy: str) -> list[int]:
    """Positions before which a prepare is needed.

    shared: the first cell of each run of cells with the same data set; fresh: every
    cell. Cells without a data set (cpu, memory, threads, mutex) need none.
    """
    _check_choice("dataset_policy", dataset_policy, DATASET_POLICIES)
    fresh = dataset_policy == "fresh"
    return [
        cell.position
        for i, cell in enumerate(cells)
        if cell.dataset and (fresh or i == 0 or cells[i - 1].dataset != cell.dataset)
    ]


def cleanup_points(cells: Sequence[Cell], dataset_policy: str) -> list[int]:
    """Positions after which a cleanup is due: the mirror image of prepare_points."""
    _check_choice("dataset_policy", dataset_policy, DATASET_POLICIES)
    fresh = dataset_policy == "fresh"
    last = len(cells) - 1
    return [
        cell.position
        for i, cell in enumerate(cells)
        if cell.dataset and (fresh or i == last or cells[i + 1].dataset != cell.dataset)
    ]


# --- checks ------------------------------------------------------------------------------


def _check_policies(test: str, repeats: int, order: str, seed: int, policy: str) -> None:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise InvalidInput("repeats", f"must be a whole number of at least 1, not {repeats!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInput("seed", f"must be a whole number, not {seed!r}")
    _check_choice("order", order, ORDERS)
    _check_choice("dataset_policy", policy, DATASET_POLICIES)
    if policy == "shared" and not dataset_reusable(test):
        raise InvalidInput(
            "dataset_policy",
            f"{test} inserts the same ids on every run, so it needs a fresh data set "
            "for each: choose 'fresh'",
        )


def _check_choice(field_name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InvalidInput(field_name, f"{value!r} is not one of {', '.join(choices)}")


def _fixed_options(test: str, fixed_options: Mapping[str, object]) -> dict[str, OptionValue]:
    if "threads" in fixed_options:
        raise InvalidInput("threads", "threads is an axis: list its values there")
    return clean_options(test, fixed_options)


def _threads_axis(test: str, values: Sequence[object]) -> list[int]:
    if not isinstance(values, list | tuple) or not values:
        raise InvalidInput("threads", "give at least one thread count")
    cleaned = [int(clean_option(test, "threads", value)) for value in values]
    _no_duplicates("threads", cleaned)
    return sorted(cleaned)  # ascending: the ramp order, and a stable base to shuffle


def _settings_axes(axes: Mapping[str, Sequence[object]]) -> dict[str, list[str]]:
    # Sorted by name: a JSON store may not keep key order, and the same plan must give
    # the same batch order for the same seed.
    return {name: _setting_values(name, axes[name]) for name in sorted(axes)}


def _setting_values(name: str, values: Sequence[object]) -> list[str]:
    if not isinstance(name, str) or not _SETTING_NAME_RE.fullmatch(name):
        raise InvalidInput("server_settings", f"{name!r} is not a server variable name")
    if not isinstance(values, list | tuple) or not values:
        raise InvalidInput(name, "give at least one value")
    cleaned = [_setting_value(name, value) for value in values]
    _no_duplicates(name, cleaned)
    return cleaned


def _setting_value(name: str, value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not _SETTING_VALUE_RE.fullmatch(value):
        raise InvalidInput(name, f"{value!r} is not allowed as a server setting value")
    return value


def _option_axes(
    test: str, axes: Mapping[str, Sequence[object]], fixed: Mapping[str, OptionValue]
) -> dict[str, list[OptionValue]]:
    result = {}
    for name in sorted(axes):
        if name == "threads":
            raise InvalidInput("threads", "threads has its own axis")
        if name in fixed:
            raise InvalidInput(name, "is both a fixed option and an axis")
        values = axes[name]
        if not isinstance(values, list | tuple) or not values:
            raise InvalidInput(name, "give at least one value")
        result[name] = [clean_option(test, name, value) for value in values]
        _no_duplicates(name, result[name])
    return result


def _no_duplicates(field_name: str, values: Sequence[object]) -> None:
    seen: list[object] = []
    for value in values:
        if value in seen:
            raise InvalidInput(field_name, f"duplicate value {_render(value)}")
        seen.append(value)


def _check_size(
    threads: int,
    settings: Mapping[str, list[str]],
    options: Mapping[str, list[OptionValue]],
    repeats: int,
) -> None:
    lengths = [len(v) for v in settings.values()] + [len(v) for v in options.values()]
    cells = threads * math.prod(lengths)
    if cells * repeats > MAX_RUNS:
        raise InvalidInput(
            "matrix",
            f"{cells} cells x {repeats} repeats = {cells * repeats} runs, "
            f"more than the limit of {MAX_RUNS}: drop some axis values or repeats",
        )


# --- ordering ----------------------------------------------------------------------------


def _combinations(
    test: str,
    fixed: Mapping[str, OptionValue],
    threads: list[int],
    settings: Mapping[str, list[str]],
    options: Mapping[str, list[OptionValue]],
) -> list[_Combination]:
    """Every cell once, in ramp order: each settings/options combination, threads ascending."""
    result = []
    for setting_values in itertools.product(*settings.values()):
        for option_values in itertools.product(*options.values()):
            for count in threads:
                merged = {**fixed, **dict(zip(options, option_values, strict=True))}
                merged["threads"] = count
                # Cross-option rules (fileio needs a mode, time or events...) per cell.
                merged = clean_run_options(test, merged)
                setting_map = dict(zip(settings, setting_values, strict=True))
                dataset = dataset_key(test, merged)
                result.append(_Combination(count, setting_map, merged, dataset))
    return result


def _group(combinations: list[_Combination]) -> list[list[_Combination]]:
    groups: dict[tuple[str, ...], list[_Combination]] = {}
    for combination in combinations:
        groups.setdefault(combination.dataset, []).append(combination)
    return list(groups.values())  # dicts keep first-appearance order


def _schedule(
    groups: list[list[_Combination]],
    repeats: int,
    order: str,
    rng: random.Random,
    axis_options: tuple[str, ...],
) -> list[Cell]:
    cells: list[Cell] = []
    for group in groups:
        for round_number in range(repeats):
            batch_round = list(group)
            if order == "interleaved":
                rng.shuffle(batch_round)
            for combination in batch_round:
                cells.append(_cell(len(cells), round_number, combination, axis_options))
    return cells


def _cell(
    position: int, round_number: int, combination: _Combination, axis_options: tuple[str, ...]
) -> Cell:
    return Cell(
        position=position,
        round=round_number,
        threads=combination.threads,
        settings=dict(combination.settings),
        options=dict(combination.options),
        dataset=combination.dataset,
        axis_options=axis_options,
    )


def _render(value: object) -> str:
    if isinstance(value, bool | int | float | str):
        return render_value(value)
    return str(value)
