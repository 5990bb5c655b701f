"""A plan's axes beyond threads and options, read from the plan as it is or as it is being
edited: the targets it compares (its first one the baseline), its tests axis, and the
servers axis with the restart-only settings (targets, installs, configs).
"""

from __future__ import annotations

from collections.abc import Sequence

from runs.errors import InvalidInput
from runs.execution.restarts.operator import target_restart_spec
from runs.models import Plan, Target
from runs.services import restarts
from runs.sysbench import matrix
from runs.sysbench.options import is_sql_test


def plan_all_targets(plan: Plan, server_targets: Sequence[Target] | None = None) -> list[Target]:
    """The targets a plan compares, in the user's order: its target first (the baseline),
    then the servers axis's others (`server_targets`: those of a plan being saved, else
    stored)."""
    first = [plan.target] if plan.target is not None else []
    if server_targets is not None:
        return first + list(server_targets)
    if not plan.pk:
        return first
    return first + [link.target for link in plan.plan_servers.select_related("target")]


def plan_tests(plan: Plan) -> list[matrix.TestSpec]:
    """The tests axis, in the user's order; empty when the plan runs `plan.test` alone.
    Its first item is `plan.test` (the editor and the API set it so), and its tests are
    all database tests or none: a batch talks to its target for all of them or for none."""
    tests = plan.tests if isinstance(plan.tests, list) else []
    specs = [_test_item(i, item) for i, item in enumerate(tests)]
    for i, spec in enumerate(specs):
        if is_sql_test(spec.test) != is_sql_test(plan.test):
            raise InvalidInput(
                "tests",
                f"item {i + 1} ({spec.test}): a tests axis holds database tests only, or "
                f"none; {plan.test} is {'one' if is_sql_test(plan.test) else 'not one'}",
            )
    if specs and specs[0].test != plan.test:
        raise InvalidInput("tests", f"the first item is the plan's test: {plan.test}")
    return specs


def _test_item(index: int, item: object) -> matrix.TestSpec:
    where = f"item {index + 1}"
    if not isinstance(item, dict) or not isinstance(item.get("test"), str):
        raise InvalidInput("tests", f"{where} must be {{test, options, family}}")
    options, family = item.get("options") or {}, item.get("family", "")
    if not isinstance(options, dict):
        raise InvalidInput("tests", f"{where}: options must be an object of sysbench options")
    if not isinstance(family, str) or len(family) > 40:
        raise InvalidInput("tests", f"{where}: family must be a short name, e.g. point")
    if not isinstance(item.get("rebuild", False), bool):
        raise InvalidInput("tests", f"{where}: rebuild is true or false")
    name = item.get("name", "")
    if not isinstance(name, str) or len(name) > 40:
        raise InvalidInput("tests", f"{where}: name is the row's name, at most 40 characters")
    return matrix.TestSpec(
        test=item["test"], options=options, family=family, rebuild=item.get("rebuild", False)
    )


def plan_servers(plan: Plan, server_targets: Sequence[Target] | None = None) -> matrix.ServerAxes:
    """The servers axis (several targets, installs, configs) and the restart-only
    settings (of any target that opted in: each restarts its own)."""
    axes = plan.servers if isinstance(plan.servers, dict) else {}
    targets = plan_all_targets(plan, server_targets)
    configs = axes.get("configs") or []
    names = list(plan.server_settings) if isinstance(plan.server_settings, dict) else []
    return matrix.ServerAxes(
        restart_settings=restarts.restart_settings_on_any(targets, names),
        targets=tuple(t.pk for t in targets) if len(targets) > 1 else (),
        installs=tuple(str(label) for label in axes.get("installs") or []),
        configs=tuple(str(c.get("label", "")) if isinstance(c, dict) else str(c) for c in configs),
    )


def target_install_labels(target: Target) -> list[str]:
    """The labels of a managed target's installs, the choices of a plan's installs axis
    (none for a target that does not restart, or whose restart config no longer holds)."""
    if target.restart_mode != "managed":
        return []
    try:
        spec = target_restart_spec(target)
    except InvalidInput:
        return []
    return [install.label for install in spec.installs] if spec is not None else []
