"""Restarts checked above the worker: a target's opt-in (its restart mode and config),
and a plan's restart axes (restart-only settings, config snippets, installs, warm or
cold) refused unless its target opted in; the number of restarts a plan would make and
their estimated time, for the plan editor; for the sweeper, the servers finished batches
could not put back (a server that came back late), put back once they can be. The
worker's side is runs/execution/restarts/.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from runs import credentials, targets
from runs.errors import InvalidInput
from runs.execution import server_targets
from runs.execution.restarts.leftovers import changed_targets, restarted_put_back, servers_changed
from runs.execution.restarts.operator import target_restart_spec
from runs.execution.restarts.spec import (
    LABEL,
    config_options,
    restart_names,
    restart_settings_check,
)
from runs.models import ACTIVE_STATUSES, FINISHED_STATUSES, Batch, Plan, Target
from runs.sysbench import matrix

# Seconds one restart takes, per engine: the medians bench/restart_time.py measured on
# small instances here (docs/servers.md, "What a restart costs"): a clean shutdown, a
# start, the first answer, the settings read back. A target that restarted before is
# estimated with its own last restarts instead (restart_seconds): a large buffer pool
# takes longer to flush and to fill.
RESTART_SECONDS: dict[str, float] = {"mariadb": 0.8, "mysql": 0.8, "postgresql": 1.0}
AFTER_RESTART = ("warm", "cold")


def target_restart_check(*, target: Target, on_results_server: bool) -> None:
    """A target's restart opt-in, checked against what the operator allowed:
    InvalidInput naming restart_config. (Who may opt it in: permissions.require_restarts.)"""
    target_restart_spec(target)
    if target.restart_mode and on_results_server:
        raise InvalidInput(
            "restart_mode", "this server holds benchdash's own results: it is never restarted"
        )


def target_restart_shown(*, target: Target) -> dict[str, Any]:
    """How a target restarts, for its page: its mode; the operator's command it names,
    its values and the argv that runs, its include (a service); its installs (a managed
    instance); its timeout; or why its config is refused now. Never a secret: a restart
    config holds none (restart_spec refuses one), and a word of the operator's argv that
    reads as one is hidden."""
    if not target.restart_mode:
        return {}
    try:
        spec = target_restart_spec(target)
    except InvalidInput as e:
        return {"mode": target.restart_mode, "refused": e.message}
    assert spec is not None  # a mode: a spec
    config = target.restart_config if isinstance(target.restart_config, dict) else {}
    return {
        "mode": spec.mode,
        "command": config.get("command", "") if spec.mode == "service" else "",
        "values": config.get("values") or {},
        "argv": [_word_shown(word) for word in spec.command],
        "include": spec.include,
        "include_dirs": spec.include_dirs,
        "log": spec.log,
        "installs": spec.installs,
        "timeout_s": spec.timeout_s,
    }


def _word_shown(word: str) -> str:
    name, eq, value = word.partition("=")
    if eq and credentials.secret_line(name.lstrip("-"), value):
        return f"{name}={credentials.HIDDEN}"
    return credentials.HIDDEN if credentials.secret_value(word) else word


def restart_setting_names(target: Target | None, names: Sequence[str]) -> frozenset[str]:
    """The settings of a plan that need a restart: none unless the target opted in (and
    then those off the engine's list of settings changed at run time)."""
    if target is None or not target.restart_mode:
        return frozenset()
    return restart_names(target.engine, names, targets.allowed_settings(target.engine))


def settings_check(target: Target, axes: Mapping[str, Any]) -> dict[str, list[str]]:
    """A plan's settings axes: the run-time ones against the allow-list, the others
    (restart-only) checked as a restart sets them, on a target that opted in only."""
    restart = restart_setting_names(target, list(axes))
    dynamic = targets.validate_settings(
        target.engine, {n: v for n, v in axes.items() if n not in restart}
    )
    restarted = restart_settings_check(
        target.engine, {n: v for n, v in axes.items() if n in restart}
    )
    return {name: dynamic.get(name) or restarted[name] for name in axes}


def servers_check(plan: Plan, axis: Sequence[Target] = ()) -> None:
    """installs, configs, after_restart and warm_s of `Plan.servers`, checked, and every
    target of the plan (`axis`: the servers axis's targets, the plan's target first) able to
    restart when the plan restarts servers: a servers axis restarts each of its targets.
    A refusal names its field inside `servers` (servers.configs), as the API has it."""
    axes = plan.servers if plan.servers else {}
    if not isinstance(axes, dict):
        raise InvalidInput("servers", "must be an object")
    unknown = sorted(set(axes) - {"installs", "configs", "after_restart", "warm_s"})
    if unknown:
        raise InvalidInput("servers", f"unknown keys {', '.join(unknown)}")
    servers: list[Target | None] = [*axis] or [plan.target]
    installs, configs = axes.get("installs") or [], axes.get("configs") or []
    settings = plan.server_settings if isinstance(plan.server_settings, dict) else {}
    restarted = restart_settings_on_any(servers, list(settings))
    for place, target in enumerate(servers):
        field = "servers" if place == 0 else "servers.targets"
        _target_restarts(target, installs, configs, restarted, field)
    if axes.get("after_restart", "warm") not in AFTER_RESTART:
        raise InvalidInput("servers.after_restart", "warm or cold")
    warm_s = axes.get("warm_s", 10)
    if not isinstance(warm_s, int) or not 1 <= warm_s <= 3600:
        raise InvalidInput("servers.warm_s", "1 to 3600 seconds of the cell's own load")


def restart_settings_on_any(
    servers: Sequence[Target | None], names: Sequence[str]
) -> frozenset[str]:
    """The settings of a plan that restart one of its targets (one that opted in)."""
    return frozenset().union(*(restart_setting_names(t, names) for t in servers))


def _target_restarts(
    target: Target | None,
    installs: Sequence[str],
    configs: Sequence[Any],
    restarted: frozenset[str],
    field: str,
) -> None:
    """One target of a plan that restarts servers: opted in, its installs named, the
    configs in its engine's words."""
    name = target.name if target is not None else "no target"
    if (installs or configs) and (target is None or not target.restart_mode):
        raise InvalidInput(
            field,
            f"installs and configs restart the server, and {name} never restarts: opt it in "
            "(its restart mode) first",
        )
    if target is None:
        return
    dynamic = targets.allowed_settings(target.engine)
    own = sorted(n for n in restarted if n not in dynamic)
    if own and not target.restart_mode:  # (the first target's is refused by its settings)
        raise InvalidInput(
            field,
            f"{', '.join(own)} restart{'s' if len(own) == 1 else ''} the server, and {name} "
            "never restarts: opt it in (its restart mode) first, or compare it in another plan",
        )
    if installs:
        _installs_check(target, installs)
    labels = []
    for i, item in enumerate(configs, 1):
        if not isinstance(item, dict) or not LABEL.fullmatch(str(item.get("label", ""))):
            raise InvalidInput(
                "servers.configs", f"config {i}: give {{label, text}}, a short label"
            )
        try:
            config_options(target.engine, str(item.get("text", "")), str(item["label"]))
        except InvalidInput as e:  # e.field is "configs <label>": named in the message
            raise InvalidInput("servers.configs", f"{e.field}: {e.message}") from None
        labels.append(item["label"])
    if len(set(labels)) != len(labels):
        raise InvalidInput("servers.configs", "each label once")


def _installs_check(target: Target, installs: Sequence[str]) -> None:
    spec = target_restart_spec(target)
    if spec is None or spec.mode != "managed":
        raise InvalidInput(
            "servers.installs", "installs are a managed instance's: a service has one"
        )
    known = [install.label for install in spec.installs]
    for label in installs:
        if label not in known:
            raise InvalidInput(
                "servers.installs", f"{label!r} is not one of {', '.join(known)} (on {target.name})"
            )
    if len(set(installs)) != len(installs):
        raise InvalidInput("servers.installs", "each install once")


def restart_estimate(plan: Plan, cells: Sequence[matrix.Cell]) -> dict[str, Any]:
    """How many restarts the plan's order makes (and the restore at the end, on each
    server it restarted), and about how long they take: for the plan editor."""
    points = matrix.restart_points(cells)
    if not points or plan.target is None:
        return {"restarts": 0, "seconds": 0}
    restarted = {cell.target for cell in cells if cell.position in set(points)}
    count = len(points) + len(restarted)  # each restarted server put back at the end
    each, source = restart_seconds(plan.target)
    warm = (
        0
        if plan.servers.get("after_restart") == "cold"
        else len(points) * int(plan.servers.get("warm_s") or 10)
    )
    return {
        "restarts": count,
        "seconds": round(count * each + warm),
        "each_s": each,
        "each_source": source,
    }


def restart_seconds(target: Target) -> tuple[float, str]:
    """One restart's seconds: the median of the target's last restarts and restores (its
    batches' logs), else the engine's figure measured here by bench/restart_time.py."""
    if target.pk is not None:
        recent = (
            Batch.objects.filter(target=target)
            .exclude(put_back={})
            .order_by("-created_at")
            .values_list("stages", flat=True)[:5]
        )
        seconds = [
            float(stage["seconds"])
            for stages in recent
            for stage in stages
            if stage.get("kind") in ("restart", "restore") and stage.get("ok")
        ]
        if seconds:
            return round(statistics.median(seconds), 1), "this target's last restarts"
    return RESTART_SECONDS.get(target.engine, 5.0), "a small instance of the engine"


PUT_BACK_WITHIN = timedelta(days=1)  # a server gone for good is not tried for ever


def servers_put_back_after_stop(*, worker: str) -> dict[int, str]:
    """`make stop`'s, once the workers of this machine stopped: the servers that batches
    of `worker` left changed (a worker killed before its batch put them back: past the
    stop's grace, or by a crash) put back as they were found, without waiting for the
    sweeper, which does not run once stopped. Each such batch: "" or what could not be."""
    problems = {}
    recent = Q(finished_at__isnull=True) | Q(finished_at__gte=timezone.now() - PUT_BACK_WITHIN)
    left = Batch.objects.filter(recent, worker=worker).exclude(put_back={}).order_by("pk")
    for batch in left:
        if not servers_changed(batch):
            continue
        # A server another worker's batch benchmarks now is never restarted under it (the
        # batches of this stopped worker are all dead, however they read): the sweeper
        # puts it back once that batch ended.
        if _in_use(changed_targets(batch), besides_worker=worker):
            problems[batch.pk] = "left as it is: another batch uses the server now"
            continue
        reason = "make stop, its worker stopped"
        problems[batch.pk] = restarted_put_back(batch=batch, reason=reason)
    return problems


def batches_put_back_left_servers() -> list[int]:
    """The sweeper's: finished batches whose server's original config and install did
    not come back at their end (it did not start within the timeout, a server late),
    `Batch.put_back` saying so, put back again, once no other batch uses the target."""
    done = []
    left = Batch.objects.filter(
        status__in=FINISHED_STATUSES,
        target__isnull=False,
        finished_at__gte=timezone.now() - PUT_BACK_WITHIN,
    ).exclude(put_back={})
    for batch in left.select_related("target"):
        if not servers_changed(batch):
            continue
        if _in_use(changed_targets(batch)):
            continue  # never restarted under another batch: a later sweep tries again
        if restarted_put_back(batch=batch, reason="the sweeper, after the batch's end"):
            continue  # still not back: the next sweep tries again
        at = f"{timezone.now():%Y-%m-%d %H:%M:%S} UTC"
        batch.warnings = [
            *batch.warnings,
            f"the server's original config was put back and restarted at {at}, once it could be",
        ]
        batch.save(update_fields=["warnings"])
        done.append(batch.pk)
    return done


def _in_use(target_ids: Sequence[int], besides_worker: str = "") -> bool:
    """Whether an active batch uses one of the targets (its own, or its servers axis);
    `besides_worker`: not counting the batches of that (stopped) worker."""
    wanted = set(target_ids)
    active = Batch.objects.filter(status__in=ACTIVE_STATUSES).only("target", "params")
    if besides_worker:
        active = active.exclude(worker=besides_worker)
    return any(wanted & set(server_targets.target_ids(batch)) for batch in active)
