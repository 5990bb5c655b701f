"""A plan's custom script checked with the plan: where it may run, its own options
(`plan.options["script_options"]`) against what the script declares, sysbench's options
against what a script takes, and its commands against the plan's data set. The result is
the script as a launch freezes it (runs/frozen.py: the version, files and interface)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.conf import settings

from runs.columns import RunOptions
from runs.errors import InvalidInput
from runs.frozen import FrozenScript
from runs.models import LoadHost, Plan
from runs.services.scripts import luascripts
from runs.sysbench.command import has_dataset
from runs.sysbench.options import ALL_TESTS, OPTIONS, SQL_TESTS
from runs.sysbench.script_options import ScriptInterface, clean_script_options, is_declared

SCRIPT_OPTIONS = "script_options"
_GENERAL = (frozenset(ALL_TESTS), frozenset(SQL_TESTS))


def plan_script_check(*, plan: Plan, options: Mapping[str, object]) -> FrozenScript | None:
    """The plan's script frozen with its checked option values; None without a script.
    InvalidInput naming the field at fault."""
    options_read = RunOptions.load(plan.options)
    raw = options_read.values.get(SCRIPT_OPTIONS)
    if raw is not None and not isinstance(raw, Mapping):
        raise InvalidInput(f"options.{SCRIPT_OPTIONS}", "give the script's options as name → value")
    if plan.script is None:
        if raw:
            raise InvalidInput(f"options.{SCRIPT_OPTIONS}", "the plan runs no custom script")
        return None
    _check_host(plan)
    given = options_read.script_options
    frozen = luascripts.luascript_frozen(script=plan.script, options={})
    interface = luascripts.luascript_interface(script=frozen)
    try:
        values = clean_script_options(interface, given)
    except InvalidInput as e:
        raise e.within("options") from None
    _check_sysbench_options(interface, [*options, *plan.option_axes])
    _check_commands(plan, interface)
    return luascripts.luascript_frozen(script=plan.script, options=values)


def _check_host(plan: Plan) -> None:
    if plan.load_host.kind != LoadHost.Kind.SSH and not settings.BENCHDASH_LOCAL_SCRIPTS:
        raise InvalidInput(
            "load_host",
            "custom Lua scripts run on SSH load hosts only here (BENCHDASH_LOCAL_SCRIPTS is "
            "off): choose an SSH load host",
        )


def _check_sysbench_options(interface: ScriptInterface, options: Iterable[str]) -> None:
    """sysbench refuses a script any option it did not declare, but its own (threads,
    time, reports, the SQL driver's): a test's option (table-size...) is the script's."""
    for name in options:
        spec = OPTIONS.get(name)
        if spec is None or spec.tests in _GENERAL or is_declared(interface, name):
            continue
        declared = ", ".join(interface.options) or "none"
        raise InvalidInput(
            name,
            f"the script declares no option {name}: give its own options under "
            f"{SCRIPT_OPTIONS} (it declares: {declared})",
        )


def _check_commands(plan: Plan, interface: ScriptInterface) -> None:
    if not has_dataset(plan.test) or plan.dataset_policy == "existing":
        return
    for command, needed in (("prepare", True), ("cleanup", plan.cleanup)):
        if needed and not interface.has(command):
            raise InvalidInput(
                "script",
                f"the script has no {command} command, and the plan's data set needs one: "
                "set the data set to existing tables"
                + (" or turn cleanup off" if command == "cleanup" else ""),
            )
