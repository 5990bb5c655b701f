"""Putting a server's original settings back after a batch changed them."""

from __future__ import annotations

from django.utils import timezone

from runs import targets
from runs.models import Batch


def batch_restore_settings(*, batch: Batch) -> None:
    """Put the server's original settings back. Safe to call more than once."""
    if settings_put_back(batch=batch):
        batch.settings_restored_at = timezone.now()
        batch.save(update_fields=["settings_restored_at"])


def settings_put_back(*, batch: Batch) -> bool:
    """The server's original settings back on the target, from the batch as it is in
    memory (the results database may be away); whether there was anything to restore."""
    if not batch.original_settings or batch.target is None:
        return False
    with targets.connect_to(batch.target) as db:
        db.restore(batch.original_settings)
    return True
