"""Who may do what: the one place the pages and the API ask.

Everyone logged in may read everything. Changing, deleting or using a target, a load host
or a plan is for:

- its owner (`created_by`: who created it, from the pages, the API or demo_setup);
- the members of a group granted Django's permission for it (`runs.change_target`,
  `runs.delete_target`, `runs.change_loadhost`, `runs.delete_loadhost`,
  `runs.change_plan`, `runs.delete_plan`);
- staff, who may do everything.

Using a target or a load host means pointing a plan at it (saving, preflight, launch): a
benchmark sends the target's password to the load host and may change the target's
server settings, so it needs the same right as changing them. The built-in `local` load
host holds no secret and anyone may use it. Launching a plan needs the right to change
the plan and to use its target and load host. Cancelling a batch is for who launched it,
the owner of its plan, members of a group with `runs.change_batch`, and staff; so are its
notes and tags. Deciding a plan's alerts (acknowledge, dismiss, accept as the new baseline)
and annotating its history need the right to change the plan.

A row without an owner (made before owners existed) is staff's and the groups' only.

Opting a server into restarts (a target's restart mode, restart config and server host)
runs commands on the database server's machine: setting or changing those is for staff
and the users and groups granted `runs.manage_restarts`, whoever owns the target.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import PermissionDenied

from runs.models import Batch, LoadHost, Plan, Target

Owned = Target | LoadHost | Plan
AnyUser = AbstractBaseUser | AnonymousUser
RESTARTS = "runs.manage_restarts"
RESTART_FIELDS = ("restart_mode", "restart_config", "server_host")
WHO_RESTARTS = (
    f"only staff or a user or group granted the permission {RESTARTS} may opt a server "
    "into restarts by benchdash or change how it is restarted (restart mode, restart "
    "config, server host): a restart runs commands on the server's machine"
)


class NotAllowed(PermissionDenied):
    """A refusal that says who may do it instead. The pages show it on a 403 page (or on
    the form field it names), the API as 403 `{field, message}`."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def may(user: AnyUser, action: str, obj: Owned) -> bool:
    """`action` is change or delete."""
    member = _member(user)
    if member is None:
        return False
    return member.is_staff or _owns(member, obj) or member.has_perm(_permission(action, obj))


def may_use(user: AnyUser, obj: Target | LoadHost) -> bool:
    if isinstance(obj, LoadHost) and obj.kind == LoadHost.Kind.LOCAL:
        return _member(user) is not None
    return may(user, "change", obj)


def may_launch(user: AnyUser, plan: Plan) -> bool:
    return may(user, "change", plan) and all(may_use(user, used) for used in _used_by(plan))


def may_manage_restarts(user: AnyUser) -> bool:
    member = _member(user)
    return member is not None and (member.is_staff or member.has_perm(RESTARTS))


def restart_fields_changed(target: Target) -> list[str]:
    """Which of RESTART_FIELDS `target` sets otherwise than stored (a new target: than a
    target that never restarts)."""
    stored = Target.objects.filter(pk=target.pk).first() if target.pk else None
    before = stored or Target()
    return [
        name
        for name in RESTART_FIELDS
        if getattr(before, _attname(name)) != getattr(target, _attname(name))
    ]


def may_cancel(user: AnyUser, batch: Batch) -> bool:
    member = _member(user)
    if member is None:
        return False
    launched_it = batch.launched_by_user_id is not None and batch.launched_by_user_id == member.pk
    owns_plan = batch.plan is not None and _owns(member, batch.plan)
    return member.is_staff or launched_it or owns_plan or member.has_perm("runs.change_batch")


# --- the same, raising NotAllowed with words a user can act on ---------------------------


def require(user: AnyUser, action: str, obj: Owned) -> None:
    if not may(user, action, obj):
        raise NotAllowed(
            f"only the owner of the {_kind(obj)} {obj} ({_owner(obj)}), staff, or a member of "
            f"a group with the permission {_permission(action, obj)} may {action} it"
        )


def require_use(
    user: AnyUser,
    plan: Plan,
    extra_load_hosts: Sequence[LoadHost] | None = None,
    server_targets: Sequence[Target] | None = None,
) -> None:
    """The plan's targets and load hosts may be used by `user` (saving, preflight,
    launch); `extra_load_hosts` and `server_targets` are those being saved with it, else
    those stored. A servers axis's target refused is named `servers.targets`."""
    if extra_load_hosts is None:
        extra_load_hosts = list(plan.extra_load_hosts.all()) if plan.pk else []
    if server_targets is None:
        server_targets = [link.target for link in plan.plan_servers.all()] if plan.pk else []
    more = [(t, "servers.targets") for t in server_targets]
    for used, named in [*((u, "") for u in [*_used_by(plan), *extra_load_hosts]), *more]:
        if not may_use(user, used):
            field = named or ("target" if isinstance(used, Target) else "load_host")
            raise NotAllowed(
                f"{field}: you may not run benchmarks with the {_kind(used)} {used}: only its "
                f"owner ({_owner(used)}), staff, or a member of a group with the permission "
                f"{_permission('change', used)} may",
                field=field,
            )


def require_attach(user: AnyUser, target: Target) -> None:
    """Imported results go on a target's history for who may use that target only."""
    if not may_use(user, target):
        raise NotAllowed(
            f"target: you may not attach results to the target {target}: only its owner "
            f"({_owner(target)}), staff, or a member of a group with the permission "
            f"{_permission('change', target)} may",
            field="target",
        )


def require_restarts(user: AnyUser, target: Target) -> None:
    """`target`'s restart mode, config and server host as stored, unless `user` may
    manage restarts: a value left as it is needs nothing."""
    changed = restart_fields_changed(target)
    if changed and not may_manage_restarts(user):
        raise NotAllowed(f"{changed[0]}: {WHO_RESTARTS}", field=changed[0])
    # The server host's key logs in there: an operator names only a host they may use.
    host = target.server_host
    if "server_host" in changed and host is not None and not may_use(user, host):
        raise NotAllowed(
            f"server_host: you may not use the load host {host}: only its owner "
            f"({_owner(host)}), staff, or a member of a group with the permission "
            f"{_permission('change', host)} may",
            field="server_host",
        )


def require_launch(user: AnyUser, plan: Plan) -> None:
    if not may(user, "change", plan):
        raise NotAllowed(
            f"only the owner of the plan {plan} ({_owner(plan)}), staff, or a member of a "
            "group with the permission runs.change_plan may launch it"
        )
    require_use(user, plan)


def require_cancel(user: AnyUser, batch: Batch) -> None:
    if not may_cancel(user, batch):
        raise NotAllowed(
            f"only who launched batch {batch.pk}, the owner of its plan, staff, or a member of "
            "a group with the permission runs.change_batch may cancel it"
        )


def require_note(user: AnyUser, batch: Batch) -> None:
    """Notes and tags on a batch: for who may cancel it (who launched it, the owner of its
    plan, a group with runs.change_batch, staff)."""
    if not may_cancel(user, batch):
        raise NotAllowed(
            f"only who launched batch {batch.pk}, the owner of its plan, staff, or a member of "
            "a group with the permission runs.change_batch may write its notes and tags"
        )


# --- helpers ---------------------------------------------------------------------------------


def _member(user: AnyUser) -> User | None:
    """The user, if logged in and active."""
    return user if isinstance(user, User) and user.is_active else None


def _owns(user: User, obj: Owned) -> bool:
    return obj.created_by_id is not None and obj.created_by_id == user.pk


def _attname(name: str) -> str:
    return "server_host_id" if name == "server_host" else name


def _used_by(plan: Plan) -> list[Target | LoadHost]:
    return [used for used in (plan.target, plan.load_host) if used is not None]


def _permission(action: str, obj: Owned) -> str:
    return f"runs.{action}_{obj._meta.model_name}"


def _kind(obj: Owned) -> str:
    return str(obj._meta.verbose_name)


def _owner(obj: Owned) -> str:
    owner = obj.created_by
    return f"owned by {owner.get_username()}" if owner is not None else "no owner"
