"""Saving what users define (targets, load hosts, plans), each checked before it is stored,
and testing a target's connection.

The API and the pages both write through here, so a plan that was accepted is a plan that
can be launched, whichever way it came in.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from runs import loadhosts, targets
from runs.execution.checks import PlanCheck, plan_check, target_validate
from runs.models import Engine, LoadHost, Plan, Target
from runs.sysbench.options import ValidationError


def target_save(*, target: Target) -> Target:
    if not target.host and not target.socket:
        raise ValidationError("host", "give a host name or a socket path")
    target_validate(target=target)
    target.full_clean()
    target.save()
    return target


def loadhost_save(*, load_host: LoadHost) -> LoadHost:
    if load_host.kind == LoadHost.Kind.SSH and not load_host.address:
        raise ValidationError("address", "an SSH load host needs an address")
    loadhosts.loadhost_check(load_host)
    load_host.full_clean()
    load_host.save()
    return load_host


def plan_save(*, plan: Plan) -> PlanCheck:
    """Store a plan that passes every check but the server's own (that is the preflight)."""
    if plan.script is not None and plan.load_host.kind != LoadHost.Kind.SSH:
        raise ValidationError("script", "custom Lua scripts run on SSH load hosts only")
    check = plan_check(plan=plan, contact_server=False)
    plan.full_clean()
    plan.save()
    return check


@transaction.atomic
def plan_delete(*, plan: Plan) -> None:
    """Delete a plan and its schedule; a plan that has batches is kept (ProtectedError)."""
    schedule = plan.schedule
    plan.delete()
    if schedule is not None:
        schedule.delete()


@dataclass(frozen=True)
class ConnectionCheck:
    """What "test connection" tells about a target; `error` set when it failed."""

    ok: bool
    version: str = ""
    may_change_settings: bool | None = None
    privileges: str = ""
    log_bin: bool | None = None
    max_connections: int | None = None
    error: str = ""
    hint: str = ""


def target_test_connection(*, target: Target) -> ConnectionCheck:
    """Log in to the target and read what a benchmark depends on. Changes nothing."""
    try:
        with targets.connect_to(target) as db:
            info = db.server_info()
            may, privileges = db.may_change_settings()
    except targets.TargetError as e:
        return ConnectionCheck(ok=False, error=e.message, hint=e.hint)
    return ConnectionCheck(
        ok=True,
        version=info.version,
        may_change_settings=may,
        privileges=privileges,
        log_bin=info.log_bin if target.engine != Engine.POSTGRESQL else None,
        max_connections=info.max_connections,
    )
