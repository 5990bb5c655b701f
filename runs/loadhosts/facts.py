"""What a host is: its facts (OS, CPU, memory, disks, limits, sysbench), and the cores and
disks of a database server for the `cores * 2 + disks` reference line."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils import timezone

from runs.loadhosts import Executor, ExecutorError, executor_for
from runs.models import LoadHost, Target


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
