"""Reads: the queries pages and the API need, each in one place."""

from __future__ import annotations

from django.db.models import QuerySet

from runs.models import Batch


def recent_batches(limit: int = 50) -> QuerySet[Batch]:
    return Batch.objects.select_related("plan", "target", "load_host")[:limit]
