"""Expanding a plan's parameter matrix into the ordered list of runs of a batch.

A cell is one combination of axis values (the server: target, install and config; the test;
threads, server settings, other options); a batch runs every cell `repeats` times, one round
after another. The order matters as
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
from dataclasses import dataclass, replace

from runs.errors import InvalidInput
from runs.sysbench.cells import (  # the cells' own names, read through this module too
    DATASET_POLICIES,
    Axes,
    Cell,
    ServerAxes,
    TestSpec,
    cleanup_points,
    prepare_points,
    rebuild_part,
    restart_points,
)
from runs.sysbench.command import (
    changes_data,
    clean_run_options,
    dataset_key,
    dataset_reusable,
)
from runs.sysbench.options import OptionValue, validate_test
from runs.sysbench.values import clean_option, clean_options, render_value

__all__ = [
    "MAX_RUNS",
    "ORDERS",
    "Axes",
    "Cell",
    "ServerAxes",
    "TestSpec",
    "cleanup_points",
    "expand",
    "prepare_points",
    "restart_points",
]

ORDERS = ("interleaved", "ramp")
MAX_RUNS = 10_000  # cells x repeats; beyond that a batch would run for weeks

# Server variables: MySQL/MariaDB names, PostgreSQL names with a dot (auto_explain.*).
_SETTING_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,127}")
# Values such as ON, 2, 134217728, O_DIRECT, STRICT_TRANS_TABLES,NO_ZERO_DATE.
_SETTING_VALUE_RE = re.compile(r"[A-Za-z0-9_.,+-]{1,256}")


@dataclass(frozen=True)
class _Combination:
    threads: int
    settings: dict[str, str]
    options: dict[str, OptionValue]
    dataset: tuple[str, ...]
    test: str = ""
    target: int | None = None
    install: str = ""
    config: str = ""
    changes_data: bool = True
    test_options: tuple[str, ...] = ()  # the names its test's item sets


def expand(
    *,
    test: str,
    fixed_options: Mapping[str, object],
    axes: Axes,
    repeats: int,
    order: str,
    seed: int,
    dataset_policy: str,
    tests: Sequence[TestSpec] = (),
    servers: ServerAxes | None = None,
) -> list[Cell]:
    """Every run of a batch, in the order they are to run; raises InvalidInput.

    With the "shared" policy, cells sharing a data set are kept together so that one
    prepare serves them all: for each data set (in order of first appearance), every
    round runs its cells; with a tests axis, the tests that only read run before those
    that change the data. With "fresh", each cell gets its own prepare from the caller,
    and rounds span the whole matrix. Within a round, cells that need the same server
    restart (install, config, restart-only settings) run together, in seeded order.

    `tests` replaces `test` when given: each test's options go over `fixed_options`.
    """
    servers = servers or ServerAxes()
    specs = _tests_axis(test, tests)
    _check_policies(specs, repeats, order, seed, dataset_policy)
    threads = _threads_axis(specs[0].test, axes.threads)
    settings = _settings_axes(axes.server_settings)
    sized = {**axes.options, **_server_sizes(servers), "tests": specs}
    _check_size(len(threads), settings, sized, repeats)
    combinations: list[_Combination] = []
    option_names: tuple[str, ...] = ()
    for index, spec in enumerate(specs):
        fixed = _fixed_options(spec.test, {**fixed_options, **spec.options})
        options = _option_axes(spec.test, axes.options, fixed)
        option_names = tuple(options)
        found = _combinations(spec.test, fixed, threads, settings, options, servers)
        # An item that rebuilds has a data set of its own; its options name its cells.
        own = rebuild_part(index) if spec.rebuild and dataset_policy == "shared" else ()
        names = tuple(sorted(spec.options))
        combinations += [
            replace(c, dataset=c.dataset and c.dataset + own, test_options=names) for c in found
        ]
    varying = _varying_axes(specs, servers)
    if dataset_policy == "shared":
        groups = _group(combinations, by_phase=len(specs) > 1)
    else:
        groups = [combinations]
    # A seeded, replayable shuffle is the point here; nothing depends on it being secret.
    rng = random.Random(seed)  # noqa: S311
    shape = _Shape(option_names, varying, servers.restart_settings)
    return _schedule(groups, repeats, order, rng, shape)


# --- checks ------------------------------------------------------------------------------


def _tests_axis(test: str, tests: Sequence[TestSpec]) -> list[TestSpec]:
    if not tests:
        return [TestSpec(validate_test(test))]
    specs = [TestSpec(validate_test(t.test), dict(t.options), t.family, t.rebuild) for t in tests]
    _no_duplicates("tests", [(spec.test, _canonical(spec.options)) for spec in specs])
    return specs


def _server_sizes(servers: ServerAxes) -> dict[str, Sequence[object]]:
    """The server axes as sizes, for the matrix's size check."""
    _no_duplicates("targets", list(servers.targets))
    _no_duplicates("installs", list(servers.installs))
    _no_duplicates("configs", list(servers.configs))
    values = {"targets": servers.targets, "installs": servers.installs}
    return {name: axis for name, axis in {**values, "configs": servers.configs}.items() if axis}


def _varying_axes(specs: Sequence[TestSpec], servers: ServerAxes) -> tuple[str, ...]:
    varying = ["test"] if len(specs) > 1 else []
    if len(servers.targets) > 1:
        varying.append("target")
    varying += [name for name, axis in _install_and_config(servers) if axis]
    return tuple(varying)


def _install_and_config(servers: ServerAxes) -> list[tuple[str, tuple[str, ...]]]:
    return [("install", servers.installs), ("config", servers.configs)]


def _canonical(options: Mapping[str, object]) -> str:
    return json.dumps(options, sort_keys=True, default=str)


def _check_policies(
    specs: Sequence[TestSpec], repeats: int, order: str, seed: int, policy: str
) -> None:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise InvalidInput("repeats", f"must be a whole number of at least 1, not {repeats!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInput("seed", f"must be a whole number, not {seed!r}")
    _check_choice("order", order, ORDERS)
    _check_choice("dataset_policy", policy, DATASET_POLICIES)
    for spec in specs:
        if policy == "shared" and not dataset_reusable(spec.test):
            raise InvalidInput(
                "dataset_policy",
                f"{spec.test} inserts the same ids on every run, so it needs a fresh data "
                "set for each: choose 'fresh'",
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
    settings: Mapping[str, Sequence[object]],
    options: Mapping[str, Sequence[object]],
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
    servers: ServerAxes,
) -> list[_Combination]:
    """Every cell of one test once, in ramp order: per server, each settings/options
    combination, threads ascending."""
    result = []
    targets: Sequence[int | None] = servers.targets or [None]
    writes = changes_data(test)
    for target, install, config in itertools.product(
        targets, servers.installs or [""], servers.configs or [""]
    ):
        for setting_values in itertools.product(*settings.values()):
            for option_values in itertools.product(*options.values()):
                for count in threads:
                    merged = {**fixed, **dict(zip(options, option_values, strict=True))}
                    merged["threads"] = count
                    # Cross-option rules (fileio needs a mode, time or events...) per cell.
                    merged = clean_run_options(test, merged)
                    setting_map = dict(zip(settings, setting_values, strict=True))
                    dataset = dataset_key(test, merged)
                    result.append(
                        _Combination(
                            count,
                            setting_map,
                            merged,
                            dataset,
                            test,
                            target,
                            install,
                            config,
                            writes,
                        )
                    )
    return result


def _group(combinations: list[_Combination], *, by_phase: bool) -> list[list[_Combination]]:
    """Cells grouped by data set, in order of first appearance; with a tests axis, each data
    set's readers before its writers, so that every reader sees the data as prepared."""
    groups: dict[tuple[tuple[str, ...], bool], list[_Combination]] = {}
    for combination in combinations:
        phase = combination.changes_data if by_phase else False
        groups.setdefault((combination.dataset, phase), []).append(combination)
    datasets = list(dict.fromkeys(dataset for dataset, _ in groups))
    order = sorted(groups, key=lambda key: (datasets.index(key[0]), key[1]))
    return [groups[key] for key in order]


@dataclass(frozen=True)
class _Shape:
    """What every cell of a batch shares: the names of its axes."""

    axis_options: tuple[str, ...]
    axes: tuple[str, ...]
    restart_settings: frozenset[str]

    def restart_key(self, combination: _Combination) -> tuple[str, ...]:
        restarted = sorted(self.restart_settings & set(combination.settings))
        if not (restarted or combination.install or combination.config):
            return ()
        values = [f"{name}={combination.settings[name]}" for name in restarted]
        return (combination.install, combination.config, *values)


def _schedule(
    groups: list[list[_Combination]],
    repeats: int,
    order: str,
    rng: random.Random,
    shape: _Shape,
) -> list[Cell]:
    cells: list[Cell] = []
    for group in groups:
        for round_number in range(repeats):
            for combination in _round(group, order, rng, shape):
                cells.append(_cell(len(cells), round_number, combination, shape))
    return cells


def _round(
    group: list[_Combination], order: str, rng: random.Random, shape: _Shape
) -> list[_Combination]:
    """One round of a group: the cells of one server restart together (a restart costs
    minutes), restarts in seeded order and the cells within each shuffled."""
    by_restart: dict[tuple[str, ...], list[_Combination]] = {}
    for combination in group:
        by_restart.setdefault(shape.restart_key(combination), []).append(combination)
    keys = list(by_restart)
    if order == "interleaved":
        rng.shuffle(keys)
        for key in keys:
            rng.shuffle(by_restart[key])
    return [combination for key in keys for combination in by_restart[key]]


def _cell(position: int, round_number: int, combination: _Combination, shape: _Shape) -> Cell:
    return Cell(
        position=position,
        round=round_number,
        threads=combination.threads,
        settings=dict(combination.settings),
        options=dict(combination.options),
        dataset=combination.dataset,
        axis_options=shape.axis_options,
        test=combination.test,
        target=combination.target,
        install=combination.install,
        config=combination.config,
        axes=shape.axes,
        restart_key=shape.restart_key(combination),
        test_options=combination.test_options if "test" in shape.axes else (),
    )


def _render(value: object) -> str:
    if isinstance(value, bool | int | float | str):
        return render_value(value)
    return str(value)
