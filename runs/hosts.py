"""Load hosts: pinning an SSH host's key, and recording what a host is (its facts).

A host key is trusted only once a user has compared its fingerprint with the host's own
and confirmed it: `loadhost_scan` shows what the host presents, and
`loadhost_confirm_host_key` pins that key if the user typed the same fingerprint.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils import timezone

from runs import ssh
from runs.executors import Executor, ExecutorError, executor_for
from runs.models import LoadHost, Target
from runs.sysbench.options import ValidationError


def loadhost_scan(*, load_host: LoadHost) -> str:
    """Connect without logging in, keep the presented key as seen, return its fingerprint
    as OpenSSH prints it (SHA256:...). Raises ExecutorError when the host cannot be reached.
    """
    _require_ssh(load_host)
    try:
        presented = ssh.scan(_ssh_host(load_host))
    except ssh.SSHError as e:
        raise ExecutorError(str(e)) from None
    load_host.seen_host_key = presented
    load_host.save(update_fields=["seen_host_key"])
    return ssh.fingerprint(presented)


def loadhost_confirm_host_key(*, load_host: LoadHost, fingerprint: str) -> LoadHost:
    """Pin the key last seen by a scan, if `fingerprint` is its fingerprint."""
    _require_ssh(load_host)
    if not load_host.seen_host_key:
        raise ValidationError("fingerprint", f"scan {load_host.name} first: no key seen yet")
    seen = ssh.fingerprint(load_host.seen_host_key)
    given = fingerprint.strip()
    if not given.startswith("SHA256:"):
        given = f"SHA256:{given}"
    if given != seen:
        raise ValidationError(
            "fingerprint",
            f"{fingerprint.strip()!r} is not the fingerprint of the key {load_host.name} "
            f"presented ({seen}); scan again, and compare with `ssh-keygen -lf` of the "
            "host's key file on the host itself",
        )
    load_host.host_key = load_host.seen_host_key
    load_host.save(update_fields=["host_key"])
    return load_host


def loadhost_refresh_facts(
    *, load_host: LoadHost, executor: Executor | None = None
) -> dict[str, object]:
    """Read the host's facts (OS, CPU, memory, disks, limits, sysbench) and keep them on
    the host; raises ExecutorError when it cannot be reached."""
    executor = executor or executor_for(load_host, settings.BENCHDASH_SYSBENCH)
    facts = executor.facts()
    load_host.facts = facts
    load_host.facts_at = timezone.now()
    LoadHost.objects.filter(pk=load_host.pk).update(facts=facts, facts_at=load_host.facts_at)
    return facts


def server_reference(target: Target, server_facts: dict[str, Any] | None) -> dict[str, Any]:
    """The cores and disks of the database server for the `cores * 2 + disks` line: the
    target's own figures where a user gave them, else what its SSH host reported."""
    facts = server_facts or {}
    measured = {
        "cpu_cores": facts.get("cpu_cores"),
        "disk_count": len(facts["disks"]) if facts.get("disks") else None,
    }
    given = {"cpu_cores": target.cpu_cores, "disk_count": target.disk_count}
    filled = [name for name, value in given.items() if value is None and measured[name]]
    reference: dict[str, Any] = {name: given[name] or measured[name] for name in given}
    cores, disks = reference["cpu_cores"], reference["disk_count"]
    reference["threads"] = cores * 2 + disks if cores and disks else None
    reference["from_server_host"] = filled
    return reference


def server_host_facts(*, target: Target) -> tuple[dict[str, object] | None, str]:
    """The facts of the target's own SSH host, or None and why they could not be read."""
    if target.server_host is None:
        return None, ""
    try:
        return loadhost_refresh_facts(load_host=target.server_host), ""
    except ExecutorError as e:
        return None, f"could not read the facts of the database server ({e})"


def _require_ssh(load_host: LoadHost) -> None:
    if load_host.kind != LoadHost.Kind.SSH:
        raise ValidationError("kind", f"{load_host.name} is not an SSH host: it has no host key")


def _ssh_host(load_host: LoadHost) -> ssh.SSHHost:
    return ssh.SSHHost.from_load_host(load_host, timeout=settings.BENCHDASH_SSH_TIMEOUT)
