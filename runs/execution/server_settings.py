"""Putting a server's original settings back after a batch changed them."""

from __future__ import annotations

from django.utils import timezone

from runs import targets
from runs.models import Batch


def batch_restore_settings(*, batch: Batch) -> None:
    """Put the server's original settings back. Safe to call more than once."""
    if not batch.original_settings or batch.target is None:
        return
    with targets.connect_to(batch.target) as db:
        db.restore(batch.original_settings)
    batch.settings_restored_at = timezone.now()
    batch.save(update_fields=["settings_restored_at"])
