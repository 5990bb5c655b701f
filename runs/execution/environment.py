"""The environment a batch runs in, recorded once before its first setting changes: the
load host's facts, the server's version and variables (PostgreSQL: every pg_settings
row), the database server's own host, and the server's original settings to restore.
Each run then records what it ran on, read from its own target once its settings were
applied (after its restart, if it had one): the target's address, the server's version,
binary and base directory, the variables that differ from that target's snapshot, and
the config it ran with, each of its settings read back (run_record_server). After the
batch, the original settings are put back. A host's
facts read here, or by preflight or its page, are kept on the host (load_host_read_facts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from runs import targets
from runs.columns import BatchEnvironment
from runs.errors import ExecutorError
from runs.execution import server_targets
from runs.execution.preflight import limits
from runs.execution.restarts.restarter import dynamic_settings
from runs.execution.restarts.spec import Options, config_options, mismatches
from runs.frozen import FrozenPlan
from runs.loadhosts import Executor
from runs.loadhosts.facts import host_facts, server_reference
from runs.models import Batch, LoadHost, Run, Target
from runs.sysbench.options import is_sql_test


def batch_record_environment(*, batch: Batch, executor: Executor) -> None:
    if "load_host" in batch.environment:
        return  # a resumed batch keeps what was recorded before its first change
    environment: dict[str, Any] = {**batch.environment, "load_host": executor.facts()}
    originals: dict[str, str] | None = None
    server: targets.ServerInfo | None = None
    plan = FrozenPlan.from_params(batch.params)
    if is_sql_test(plan.test) and batch.target is not None:
        with targets.connect_to(batch.target) as db:
            server = db.server_info()
            environment["server"] = {
                "version": server.version,
                "variables": server.variables,
                **server.details,  # PostgreSQL: every pg_settings row
            }
            batch.warnings = [*batch.warnings, *_server_warnings(batch, server)]
            originals = db.originals(dynamic_settings(batch.target, plan.server_settings))
    if batch.target is not None:
        environment.update(_server_host_environment(batch, batch.target))
    batch.environment = environment
    batch.original_settings = originals
    if is_sql_test(plan.test):
        if batch.target is not None and server is not None:
            server_targets.server_record(batch, batch.target, server, variables=False)
        _record_server_targets(batch, plan)
    batch.save(update_fields=["environment", "original_settings", "warnings", "put_back"])


def _record_server_targets(batch: Batch, plan: FrozenPlan) -> None:
    """Each further target's server and original settings, before the first change."""
    for target in server_targets.server_targets(batch):
        with targets.connect_to(target) as db:
            server = db.server_info()
            server_targets.server_record(batch, target, server)
            warnings = [f"{target.name}: {w}" for w in _server_warnings(batch, server)]
            batch.warnings = [*batch.warnings, *(w for w in warnings if w not in batch.warnings)]
            server_targets.originals_keep(batch, target, db.originals(plan.server_settings))


def _server_host_environment(batch: Batch, target: Target) -> dict[str, Any]:
    """The database server's own facts, when it has an SSH host, and its cores and
    disks for the `cores * 2 + disks` reference line."""
    facts, problem = server_host_facts(target=target)
    if problem and problem not in batch.warnings:
        batch.warnings = [*batch.warnings, problem]
    environment: dict[str, Any] = {"reference": server_reference(target, facts)}
    if facts is not None:
        environment["server_host"] = facts
    return environment


def load_host_read_facts(
    *, load_host: LoadHost, executor: Executor | None = None
) -> dict[str, object]:
    """Read the host's facts (OS, CPU, memory, disks, limits, sysbench) and keep them on
    the host, for its page; raises ExecutorError when it cannot be reached."""
    facts = host_facts(load_host=load_host, executor=executor)
    load_host.facts = facts
    load_host.facts_at = timezone.now()
    LoadHost.objects.filter(pk=load_host.pk).update(facts=facts, facts_at=load_host.facts_at)
    return facts


def server_host_facts(*, target: Target) -> tuple[dict[str, object] | None, str]:
    """The facts of the target's own SSH host, or None and why they could not be read."""
    if target.server_host is None:
        return None, ""
    try:
        return load_host_read_facts(load_host=target.server_host), ""
    except ExecutorError as e:
        return None, f"could not read the facts of the database server ({e})"


def _server_warnings(batch: Batch, server: targets.ServerInfo) -> list[str]:
    max_threads = max(batch.runs.values_list("threads", flat=True))
    warnings = limits.server_warnings(
        server, FrozenPlan.from_params(batch.params).server_settings, max_threads
    )
    return [w for w in warnings if w not in batch.warnings]


def run_server_changes(
    *, batch: Batch, variables: Mapping[str, str], target_id: int | None = None
) -> dict[str, Any]:
    """What differs from the batch's snapshot in the server variables read back when a
    run's settings were applied: {"server": {"variables": {...}}}, or {} when nothing does.
    Variables that move on their own (the binary log's position) are left out. A further
    target's run is compared with that target's own snapshot."""
    before = server_targets.server_variables(batch, target_id)
    if before is None:
        before = BatchEnvironment.load(batch.environment).server_variables
    changed = {
        name: value
        for name, value in variables.items()
        if before.get(name) != value and name not in targets.MOVING_VARIABLES
    }
    return {"server": {"variables": changed}} if changed else {}


def run_record_server(
    *, batch: Batch, run: Run, target: Target, db: targets.ServerTarget, config_text: str
) -> dict[str, str]:
    """What the run ran on, read from its target now (its settings applied, its restart
    done), on `run.environment`: "target" (its address and version), "server" (version,
    install, binary and base directory, the variables that differ from this target's
    snapshot) and, for a cell with a config, "config" (label, text, each setting it sets
    as written and as read back, and those that did not take, also the run's warnings).
    Returns the config's settings as read back, for the run's verified settings."""
    info = db.server_info()
    restart = BatchEnvironment.load(run.environment).restart
    changed = run_server_changes(batch=batch, variables=info.variables, target_id=run.target_id)
    server = {
        "version": info.version,
        "install": restart.get("install") or run.install,
        "binary": restart.get("binary", ""),
        # MariaDB and MySQL say their base directory; a restart knows it of any server.
        "basedir": restart.get("basedir") or info.variables.get("basedir", ""),
        "variables": changed.get("server", {}).get("variables", {}),
    }
    address = {**server_targets.target_address(target), "version": info.version}
    record: dict[str, Any] = {"target": address, "server": server}
    if run.config:
        record["config"] = _config_read_back(db, target.engine, run.config, config_text)
        run.warnings = [*run.warnings, *record["config"]["not_taken"]]
    run.environment = {**run.environment, **record}
    return dict(record.get("config", {}).get("verified", {}))


def _config_read_back(
    db: targets.ServerTarget, engine: str, label: str, text: str
) -> dict[str, Any]:
    """The config's `name = value` lines as written and as the server shows them."""
    options = Options(tuple(config_options(engine, text, label)))
    shown = db.read(options.names)
    return {
        "label": label,
        "text": text,
        "settings": options.wanted(),
        "verified": {name: shown.get(name, "") for name in options.names},
        "not_taken": [f"config {label}: {line}" for line in mismatches(options, shown)],
    }


def batch_restore_settings(*, batch: Batch) -> None:
    """Put every target's original settings back. Safe to call more than once."""
    try:
        restored = settings_put_back(batch=batch)
    finally:
        batch.save(update_fields=["put_back"])
    if restored:
        batch.settings_restored_at = timezone.now()
        batch.save(update_fields=["settings_restored_at"])


def settings_put_back(*, batch: Batch) -> bool:
    """The servers' original settings back on every target, from the batch as it is in
    memory (the results database may be away); whether there was anything to restore.
    Every target is tried; the first that failed raises TargetError after that."""
    problems = server_targets.settings_put_back(batch)
    if not batch.original_settings or batch.target is None:
        restored = False
    else:
        with targets.connect_to(batch.target) as db:
            db.restore(batch.original_settings)
        restored = True
    if problems:
        raise targets.TargetError("; ".join(problems))
    return restored
