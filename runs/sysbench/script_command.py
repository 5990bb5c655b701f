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
    mine = clean_script_options(script.interface, script.values)
    general: dict[str, OptionValue] = {}
    for name, value in cleaned.items():
        if is_declared(script.interface, name):
            mine.setdefault(name.replace("-", "_"), value)
        elif OPTIONS[name].tests in _GENERAL:
            general[name] = value
        else:
            raise InvalidInput(name, f"not an option of this script: it declares no {name}")
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
