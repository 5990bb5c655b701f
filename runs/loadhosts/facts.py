"""What a host is: its facts (OS, CPU, memory, disks, limits, sysbench), read over SSH or
on the worker and returned as plain values (runs/execution/environment.py keeps them on
the host), and the cores and disks of a database server for the `cores * 2 + disks`
reference line."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from runs.loadhosts import Executor, executor_for
from runs.models import LoadHost, Target


def host_facts(*, load_host: LoadHost, executor: Executor | None = None) -> dict[str, object]:
    """The host's facts (OS, CPU, memory, disks, limits, sysbench); raises ExecutorError
    when it cannot be reached."""
    executor = executor or executor_for(load_host, settings.BENCHDASH_SYSBENCH)
    return executor.facts()


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
