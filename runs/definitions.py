"""Saving what users define (targets, load hosts, plans), each checked before it is stored.

The API and the pages both write through here, so a plan that was accepted is a plan that
can be launched, whichever way it came in.
"""

from __future__ import annotations

from django.db import transaction

from runs import services
from runs.models import LoadHost, Plan, Target
from runs.sysbench.options import ValidationError


def target_save(*, target: Target) -> Target:
    if not target.host and not target.socket:
        raise ValidationError("host", "give a host name or a socket path")
    services.target_validate(target=target)
    target.full_clean()
    target.save()
    return target


def loadhost_save(*, load_host: LoadHost) -> LoadHost:
    if load_host.kind == LoadHost.Kind.SSH and not load_host.address:
        raise ValidationError("address", "an SSH load host needs an address")
    load_host.full_clean()
    load_host.save()
    return load_host


def plan_save(*, plan: Plan) -> services.PlanCheck:
    """Store a plan that passes every check but the server's own (that is the preflight)."""
    if plan.script is not None and plan.load_host.kind != LoadHost.Kind.SSH:
        raise ValidationError("script", "custom Lua scripts run on SSH load hosts only")
    check = services.plan_check(plan=plan, contact_server=False)
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
