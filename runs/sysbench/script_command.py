"""The command line of a custom script with a discovered interface (script_options.py):
its own commands (prepare, run, cleanup, check where it has one) and options. The
connection goes into the config file as for the built-in tests (command.py).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from runs.errors import InvalidInput
from runs.sysbench.command import (
    PHASES,
    Connection,
    SysbenchCommand,
    check_engine_options,
    checked_path,
    checked_script,
    clean_run_options,
    config_text,
)
from runs.sysbench.options import ALL_TESTS, OPTIONS, SQL_TESTS, OptionValue, validate_test
from runs.sysbench.script_options import ScriptInterface, clean_script_options, is_declared
from runs.sysbench.values import clean_options, render_value

SCRIPT_PHASES = (*PHASES, "check")
# sysbench's own options, which every script takes: threads, time, rate, the reports,
# and the SQL driver's.
_GENERAL = (frozenset(ALL_TESTS), frozenset(SQL_TESTS))


@dataclass(frozen=True)
class ScriptCommand:
    """A custom script as a command runs it: its entry file (staged by the executor),
    what it offers, and the plan's values for its options."""

    path: str
    interface: ScriptInterface
    values: Mapping[str, object] = dataclasses.field(default_factory=dict)


def build_script_command(
    *,
    test: str,
    phase: str,
    options: Mapping[str, object],
    connection: Connection | None,
    config_path: str,
    executable: str = "sysbench",
    script: ScriptCommand,
) -> SysbenchCommand:
    """sysbench's own options that apply to any script and the options the script
    declared, each checked by its kind: sysbench refuses any other option of a script
    ("invalid option"). `test` decides the connection (a database test connects to the
    target). prepare gets the threads too (a script may load in parallel); cleanup and
    check the script's options alone."""
    test = validate_test(test)
    if phase not in SCRIPT_PHASES or not script.interface.has(phase):
        raise InvalidInput("phase", f"the script has no {phase!r} command")
    cleaned = clean_run_options(test, options) if phase == "run" else clean_options(test, options)
    if connection is not None:
        check_engine_options(connection.engine, cleaned)
    general, mine = _split(cleaned, script)
    if phase != "run":
        general = {k: v for k, v in general.items() if k == "threads" and phase == "prepare"}
    argv = [
        checked_path("executable", executable),
        f"--config-file={checked_path('config_path', config_path)}",
        checked_script(script.path),
        *(f"--{name}={render_value(value)}" for name, value in {**general, **mine}.items()),
        phase,
    ]
    return SysbenchCommand(argv=argv, config_text=config_text(test, connection))


def script_dataset_key(
    *, test: str, options: Mapping[str, object], script: ScriptCommand
) -> tuple[str, ...]:
    """What a custom script's own prepare makes, named by the script: its entry and the
    values of its own options (the plan's, and sysbench's that it declares, `tables`
    say), which its prepare and cleanup take. Not an oltp data set: the script's tables
    are its own. Threads and time do not shape it."""
    _, mine = _split(clean_options(validate_test(test), options), script)
    name = script.path.replace("\\", "/").rsplit("/", 1)[-1]
    return (name, *(f"{key}={render_value(value)}" for key, value in sorted(mine.items())))


def _split(
    cleaned: Mapping[str, OptionValue], script: ScriptCommand
) -> tuple[dict[str, OptionValue], dict[str, OptionValue]]:
    """sysbench's own options (threads, time, the reports, the driver's), and the
    script's: its values, with sysbench's options it declares (`tables`)."""
    mine = clean_script_options(script.interface, script.values)
    general: dict[str, OptionValue] = {}
    for name, value in cleaned.items():
        if is_declared(script.interface, name):
            mine.setdefault(name.replace("-", "_"), value)
        elif OPTIONS[name].tests in _GENERAL:
            general[name] = value
        else:
            raise InvalidInput(name, f"not an option of this script: it declares no {name}")
    return general, mine
