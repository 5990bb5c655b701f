"""What benchdash left changed on a server when a batch could not put it back itself: its
worker died during a restart-only cell, or the original did not come back at the batch's
end (a server late). For the sweeper: `Batch.servers` says what to put back."""

from __future__ import annotations

from runs.execution.restarts.restarter import Restarts
from runs.models import Batch


def servers_put_back(*, batch: Batch, reason: str) -> str:
    """For the sweeper: what a dead worker's batch changed on its server, put back."""

    def save() -> None:
        Batch.objects.filter(pk=batch.pk).update(servers=batch.servers, stages=batch.stages)

    restarts = Restarts(batch, tick=lambda: None, show=lambda text: None, save=save)
    return restarts.put_back(reason)


def servers_changed(batch: Batch) -> bool:
    """Whether benchdash left a server of the batch running something else than its
    original (a put-back that failed: the server did not come back in time)."""
    return any(
        isinstance(state, dict) and state.get("running") for state in (batch.servers or {}).values()
    )
