"""The targets of a batch with a servers axis: each run measures its own target
(`Run.target`), the first target is the batch's own (`Batch.target`, the baseline).

Before the first change, every target's name, engine, host, port and server version are
recorded on the batch (`environment["targets"]`, by id, the batch's own first), each further
target's variables with it (the batch's own are `environment["server"]`), and its
original settings kept in
`Batch.put_back[str(id)]["original_settings"]` (the first target's stay in
`Batch.original_settings`); at the end, after a cancel, or by the sweeper after a crash,
every target gets its settings back (`settings_put_back`).
"""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from runs import targets
from runs.columns import BatchEnvironment
from runs.frozen import FrozenPlan
from runs.models import Batch, Run, Target

logger = logging.getLogger(__name__)


def batch_targets(batch: Batch) -> list[Target]:
    """The batch's targets in the plan's order, its own first; one when it has no axis."""
    first = [batch.target] if batch.target is not None else []
    ids = [int(t["id"]) for t in FrozenPlan.from_params(batch.params).targets if "id" in t]
    more = [i for i in ids if i != batch.target_id]
    if not more:
        return first
    rows = Target.objects.in_bulk(more)
    return first + [rows[i] for i in more if i in rows]


def server_targets(batch: Batch) -> list[Target]:
    """The targets beyond the batch's own."""
    return batch_targets(batch)[1:]


def target_ids(batch: Batch) -> list[int]:
    """Every target id the batch uses (locks, the sweeper), without reading the rows."""
    ids = [batch.target_id] if batch.target_id is not None else []
    more = [int(t["id"]) for t in FrozenPlan.from_params(batch.params).targets if "id" in t]
    return ids + [i for i in more if i not in ids]


def run_target(run: Run, batch: Batch, known: dict[int, Target] | None = None) -> Target | None:
    """The server a run measures: its own target, else (older rows) the batch's."""
    if run.target_id is None or run.target_id == batch.target_id:
        return batch.target
    if known is not None and run.target_id in known:
        return known[run.target_id]
    return run.target


def server_record(
    batch: Batch, target: Target, server: targets.ServerInfo, *, variables: bool = True
) -> None:
    """A target's address and version, and (a further target's) variables, for its runs
    to be compared with; the batch's own variables are its environment's "server"."""
    recorded = dict(BatchEnvironment.load(batch.environment).targets)
    recorded[str(target.pk)] = {
        **target_address(target),
        "version": server.version,
        **({"variables": server.variables} if variables else {}),
    }
    batch.environment = {**batch.environment, "targets": recorded}


def target_address(target: Target) -> dict[str, Any]:
    """Which server a target is: its name, engine, host, port (or socket)."""
    return {
        "id": target.pk,
        "name": target.name,
        "engine": target.engine,
        "host": target.host,
        "port": target.port,
        "socket": target.socket,
    }


def server_variables(batch: Batch, target_id: int | None) -> dict[str, str] | None:
    """The variables recorded for a further target; None for the batch's own."""
    if target_id is None or target_id == batch.target_id:
        return None
    return dict(_recorded(batch, target_id).get("variables") or {})


def server_snapshot(batch: Batch, target_id: int | None) -> dict[str, Any]:
    """What the batch recorded of a run's target before its first change: {version,
    variables, ...}, the batch's own server's for its own target (and older rows)."""
    own = BatchEnvironment.load(batch.environment).server
    variables = server_variables(batch, target_id)
    if variables is None:
        return own
    recorded = _recorded(batch, target_id or 0)
    return {"version": recorded.get("version") or "", "variables": variables}


def run_server(batch: Batch, target: Target | None) -> dict[str, Any]:
    """What a run's environment says of its server on a batch with several targets."""
    if target is None or not FrozenPlan.from_params(batch.params).targets:
        return {}
    version = _recorded(batch, target.pk).get("version")
    version = version or BatchEnvironment.load(batch.environment).server_version
    return {"target": {"id": target.pk, "name": target.name, "version": version or ""}}


def _recorded(batch: Batch, target_id: int) -> dict[str, Any]:
    """What was recorded of a further target ({name, engine, version, variables})."""
    recorded = BatchEnvironment.load(batch.environment).targets.get(str(target_id))
    return dict(recorded) if isinstance(recorded, dict) else {}


def originals_keep(batch: Batch, target: Target, originals: dict[str, str]) -> None:
    """A further target's settings before the batch's first change."""
    put_back = dict(batch.put_back or {})
    entry = dict(put_back.get(str(target.pk)) or {})
    entry["original_settings"] = originals
    entry.pop("settings_restored_at", None)
    put_back[str(target.pk)] = entry
    batch.put_back = put_back


def settings_put_back(batch: Batch) -> list[str]:
    """Every further target's original settings back (the batch as it is in memory);
    returns what could not be put back, one line per target. Safe to call again."""
    problems = []
    put_back = dict(batch.put_back or {})
    names = {t.pk: t for t in server_targets(batch)} if put_back else {}
    for key, entry in put_back.items():
        originals = (entry or {}).get("original_settings")
        target = names.get(int(key))
        if not originals or target is None:
            continue
        try:
            with targets.connect_to(target) as db:
                db.restore(originals)
        except targets.TargetError as e:
            problems.append(f"could not restore {target.name}'s settings {originals}: {e.message}")
            logger.error("batch %s: %s", batch.pk, problems[-1])
            continue
        put_back[key] = {**entry, "settings_restored_at": timezone.now().isoformat()}
    batch.put_back = put_back
    return problems


def settings_left(batch: Batch) -> bool:
    """Whether a further target's settings are still to be put back."""
    return any(
        (entry or {}).get("original_settings") and not (entry or {}).get("settings_restored_at")
        for entry in (batch.put_back or {}).values()
    )
