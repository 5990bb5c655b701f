"""What benchdash left changed on a server when a batch could not put it back itself: its
worker died during a restart-only cell, or the original did not come back at the batch's
end (a server late). For the sweeper: `Batch.put_back` says what to put back, per target
(a servers axis restarts each of its targets that opted in)."""

from __future__ import annotations

from typing import Any

from runs.execution.restarts.batch_restarts import put_back_each
from runs.execution.restarts.restarter import Restarts
from runs.models import Batch, Target


def restarted_put_back(*, batch: Batch, reason: str) -> str:
    """For the sweeper: what a dead worker's batch changed on its servers, put back; ""
    or what could not be, one line per server."""

    def save() -> None:
        Batch.objects.filter(pk=batch.pk).update(put_back=batch.put_back, stages=batch.stages)

    batch.stages = running_stages_ended(batch.stages, reason)
    rows = Target.objects.in_bulk(changed_targets(batch))
    each = [
        Restarts(batch, target=target, tick=lambda: None, show=lambda text: None, save=save)
        for target in rows.values()
    ]
    return put_back_each(each, reason, named=len(each) > 1)


def running_stages_ended(stages: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    """A restart its worker did not live to finish, said so (never left running)."""
    return [
        {**s, "status": "finished", "ok": False, "error": f"not finished: {reason}"}
        if s.get("status") == "running"
        else s
        for s in stages
    ]


def changed_targets(batch: Batch) -> list[int]:
    """The targets benchdash left running something else than their original (a put-back
    that failed, or a worker that died before it)."""
    return [
        int(key)
        for key, state in (batch.put_back or {}).items()
        if isinstance(state, dict) and state.get("running")
    ]


def servers_changed(batch: Batch) -> bool:
    """Whether benchdash left a server of the batch running something else than its
    original (a put-back that failed: the server did not come back in time)."""
    return bool(changed_targets(batch))
