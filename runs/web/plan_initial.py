"""The plan editor's initial values from a stored plan: its plain fields, auto modes,
servers and schedule as PlanForm's initial, and its matrix as plan_editor shows it."""

from __future__ import annotations

import zoneinfo
from datetime import datetime
from typing import Any

from runs.columns import RunOptions
from runs.models import Plan
from runs.services.nightly.schedules import schedule_describe
from runs.services.plan_axes import plan_all_targets
from runs.sysbench import suites
from runs.web import plan_editor
from runs.web.plan_form import AUTO_FIELDS


def auto_initial(auto: dict[str, Any]) -> dict[str, Any]:
    """The editor's fields of a plan's auto modes: the inverse of auto_settings."""
    initial: dict[str, Any] = {}
    for mode, fields in AUTO_FIELDS.items():
        if isinstance(auto.get(mode), dict):
            initial[f"{mode}_auto"] = True
            for name, key in fields.items():
                if auto[mode].get(key) is not None:
                    initial[name] = auto[mode][key]
    if isinstance(auto.get("hold"), dict):
        initial["hold_last_level_s"] = auto["hold"].get("last_level_s")
    return initial


def plan_initial(plan: Plan) -> dict[str, Any]:
    initial: dict[str, Any] = {
        "name": plan.name,
        "target": plan.target_id,
        "load_host": plan.load_host_id,
        "extra_load_hosts": [h.pk for h in plan.extra_load_hosts.all()] if plan.pk else [],
        "server_targets": [t.pk for t in plan_all_targets(plan)[1:]],
        **servers_initial(plan.servers if isinstance(plan.servers, dict) else {}),
        "load_split": plan.load_split,
        "test": plan.test,
        "tests": suites.suite_text(plan.tests or []),
        "script": plan.script_id,
        "script_options": plan_editor.script_options_text(
            RunOptions.load(plan.options).script_options
        ),
        "threads": ",".join(str(t) for t in plan.threads),
        "repeats": plan.repeats,
        "warmup_s": plan.warmup_s,
        "quiet_wait_s": plan.quiet_wait_s,
        "order_policy": plan.order_policy,
        "dataset_policy": plan.dataset_policy,
        "cleanup": plan.cleanup,
        "seed": plan.seed,
        "notify_emails": plan.notify_emails,
        "notify_webhook": plan.notify_webhook,
        "regression_threshold_pct": plan.regression_threshold_pct,
        "history_nights": plan.history_nights,
        "schedule_timezone": "UTC",
        "schedule_enabled": True,
        **auto_initial(plan.auto or {}),
    }
    if plan.schedule is not None:
        info = schedule_describe(plan.schedule)
        initial.update(
            schedule_kind=info.kind,
            schedule_cron=info.cron or "",
            schedule_clocked_at=_wall_time(info.clocked_at, info.timezone),
            schedule_interval_min=(info.interval_s // 60) if info.interval_s else None,
            schedule_timezone=info.timezone,
            schedule_enabled=info.enabled,
        )
    return initial


def servers_initial(servers: dict[str, Any]) -> dict[str, Any]:
    """The editor's fields of a plan's `servers` but its configs (rows, plan_editor.py)."""
    return {
        "installs": ",".join(str(label) for label in servers.get("installs") or []),
        "after_restart": servers.get("after_restart") or "",
        "warm_s": servers.get("warm_s"),
    }


def _wall_time(moment: datetime | None, zone: str) -> str:
    """What a datetime-local input shows: the time in the schedule's zone, no offset."""
    if moment is None:
        return ""
    return moment.astimezone(zoneinfo.ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M:%S")


def plan_matrix_values(plan: Plan) -> dict[str, Any]:
    return plan_editor.form_values(
        threads=plan.threads,
        options=plan.options,
        server_settings=plan.server_settings,
        option_axes=plan.option_axes,
        configs=(plan.servers or {}).get("configs") or [],
    )
