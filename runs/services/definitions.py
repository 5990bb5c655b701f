"""Saving what users define (targets, load hosts, plans), each checked before it is stored,
and testing a target's connection.

The API and the pages both write through here, so a plan that was accepted is a plan that
can be launched, whichever way it came in.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from runs import loadhosts, targets
from runs.analysis.auto import settings as auto_settings
from runs.errors import InvalidInput
from runs.models import Engine, LoadHost, Plan, PlanServer, Target
from runs.services.answers import stored_results
from runs.services.nightly import notifications, webhooks
from runs.services.plans import PlanCheck, plan_check, target_validate
from runs.sysbench.command import build_command

# Where a target's password is sent, and where a load host's key logs in: when one of these
# changes, the stored secret is cleared unless a new one comes with the change, so that
# nobody can point a stored secret at a server of their own.
TARGET_ADDRESS = ("engine", "host", "port", "socket", "user")
LOADHOST_ADDRESS = ("address", "user")

_HOST_NAME = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
    r"(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?"
)
_SSH_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}")


def target_save(*, target: Target, password: str | None = None) -> Target:
    """Check and store a target. `password` None keeps the stored one, unless the target
    now points elsewhere (TARGET_ADDRESS changed): then it is cleared."""
    target_check(target=target, password=password)
    # What a stored answer read from the target (its cores and disks draw the cores x 2 +
    # disks line of the results pages): changed, those answers are built again.
    before = Target.objects.filter(pk=target.pk).values_list("cpu_cores", "disk_count")
    previous = before.first() if target.pk else None
    target.save()
    if previous is not None and previous != (target.cpu_cores, target.disk_count):
        stored_results.target_results_forget(target=target)
    return target


def target_check(*, target: Target, password: str | None = None) -> None:
    """What target_save checks (InvalidInput naming the field), and the password it
    would store set on `target`: for forms that show errors before saving (the admin)."""
    target.password = _secret(target, TARGET_ADDRESS, "password", password)
    if not target.host and not target.socket:
        raise InvalidInput("host", "give a host name or a socket path")
    if target.host:
        _check_host("host", target.host)
    if target.port is not None:
        _check_port("port", target.port)
    # What sysbench will be given must be what it can take: the same checks as at run time.
    build_command(
        test="oltp_point_select",
        phase="run",
        options={},
        connection=targets.connection_of(target),
        config_path="sysbench.conf",
    )
    target_validate(target=target)
    target.full_clean()


def loadhost_save(*, load_host: LoadHost, private_key: str | None = None) -> LoadHost:
    """Check and store a load host. `private_key` None keeps the stored one, unless the
    host now points elsewhere (LOADHOST_ADDRESS changed): then it is cleared."""
    loadhost_check(load_host=load_host, private_key=private_key)
    load_host.save()
    return load_host


def loadhost_check(*, load_host: LoadHost, private_key: str | None = None) -> None:
    """What loadhost_save checks, and the key it would store set on `load_host`."""
    load_host.private_key = _secret(load_host, LOADHOST_ADDRESS, "private_key", private_key)
    if load_host.kind == LoadHost.Kind.SSH:
        if not load_host.address:
            raise InvalidInput("address", "an SSH load host needs an address")
        _check_host("address", load_host.address)
        _check_port("port", load_host.port)
        if load_host.user and not _SSH_USER.fullmatch(load_host.user):
            raise InvalidInput("user", f"{load_host.user!r} is not a user name")
        loadhosts.loadhost_check(load_host)  # what the SSH layer itself would refuse
    load_host.full_clean()


def _secret(obj: Target | LoadHost, fields: tuple[str, ...], name: str, given: str | None) -> str:
    if given is not None:
        return given
    stored = type(obj).objects.filter(pk=obj.pk).first() if obj.pk else None
    if stored is None:
        return str(getattr(obj, name))
    return "" if _moved(stored, obj, fields) else str(getattr(stored, name))


def _moved(stored: Target | LoadHost, obj: Target | LoadHost, fields: tuple[str, ...]) -> bool:
    return any(getattr(stored, f) != getattr(obj, f) for f in fields)


def _check_host(field: str, value: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not _HOST_NAME.fullmatch(value):
            raise InvalidInput(field, f"{value!r} is not a host name or an IP address") from None


def _check_port(field: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise InvalidInput(field, f"{value!r} is not a port number (1-65535)")


def plan_save(
    *,
    plan: Plan,
    extra_load_hosts: Sequence[LoadHost] | None = None,
    server_targets: Sequence[Target] | None = None,
) -> PlanCheck:
    """Store a plan that passes every check but the server's own (that is the preflight);
    with `extra_load_hosts`, those are its extra load hosts from now on, and with
    `server_targets` its servers axis's targets after `plan.target`, in that order."""
    check = plan_validate(
        plan=plan, extra_load_hosts=extra_load_hosts, server_targets=server_targets
    )
    with transaction.atomic():
        plan.save()
        if extra_load_hosts is not None:
            plan.extra_load_hosts.set(extra_load_hosts)
        if server_targets is not None:
            plan.plan_servers.all().delete()
            PlanServer.objects.bulk_create(
                PlanServer(plan=plan, target=target, position=i)
                for i, target in enumerate(server_targets, start=1)
            )
    return check


def plan_validate(
    *,
    plan: Plan,
    extra_load_hosts: Sequence[LoadHost] | None = None,
    server_targets: Sequence[Target] | None = None,
) -> PlanCheck:
    """What plan_save checks (InvalidInput naming the field), the plan's auto modes set
    with their defaults on `plan`: for forms that show errors before saving (the admin)."""
    _, not_emails = notifications.plan_recipients(plan)
    if not_emails:
        raise InvalidInput(
            "notify_emails", f"{not_emails[0]!r} is not an email address (one address a line)"
        )
    if plan.notify_webhook.strip():
        webhooks.webhook_check(plan.notify_webhook)
    first = plan.tests[0] if isinstance(plan.tests, list) and plan.tests else None
    if isinstance(first, dict) and isinstance(first.get("test"), str):
        plan.test = first["test"]  # a tests axis: its first item is the plan's test
    check = plan_check(
        plan=plan,
        contact_server=False,
        extra_load_hosts=extra_load_hosts,
        server_targets=server_targets,
    )
    plan.auto = auto_settings.auto_stored(plan.auto)  # checked: stored with its defaults
    plan.full_clean()
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
