"""One benchmark per server and per load host at a time.

Two benchmarks against one server ruin both, and two on one load host compete for its
CPUs. A batch holds a ResourceLock row per resource while it runs; the unique resource
name makes the database itself refuse a second holder, so this holds across workers.
"""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction
from django.db.models import Q

from runs.models import Batch, ResourceLock, Status

logger = logging.getLogger(__name__)


def _resources(batch: Batch) -> list[str]:
    names = []
    if batch.target_id is not None:
        names.append(f"target:{batch.target_id}")
    if batch.load_host_id is not None:
        names.append(f"loadhost:{batch.load_host_id}")
    return names


def locks_acquire(*, batch: Batch) -> str:
    """Take every lock of the batch, or none: returns "" or what the batch waits for.

    Call inside a transaction; the savepoint keeps a refused insert from spoiling it.
    """
    wanted = _resources(batch)
    try:
        with transaction.atomic():
            ResourceLock.objects.bulk_create(
                ResourceLock(resource=name, batch=batch) for name in wanted
            )
    except IntegrityError:
        holder = (
            ResourceLock.objects.filter(resource__in=wanted)
            .exclude(batch=batch)
            .select_related("batch__target", "batch__load_host")
            .first()
        )
        if holder is None:  # released meanwhile: the next attempt will succeed
            return "a lock that was just released"
        return _describe(holder)
    return ""


def _describe(lock: ResourceLock) -> str:
    kind, _ = lock.resource.split(":", 1)
    batch = lock.batch
    what = f"target {batch.target}" if kind == "target" else f"load host {batch.load_host}"
    return f"{what} is busy with batch {batch.pk}"


def locks_release(*, batch: Batch) -> list[int]:
    """Free the batch's locks; returns the waiting batches that may go on now, oldest
    first, for the caller to hand to a worker once this is committed."""
    ResourceLock.objects.filter(batch=batch).delete()
    waiting = Batch.objects.filter(status=Status.WAITING).exclude(pk=batch.pk)
    related = Q()
    if batch.target_id is not None:
        related |= Q(target_id=batch.target_id)
    if batch.load_host_id is not None:
        related |= Q(load_host_id=batch.load_host_id)
    return list(waiting.filter(related).order_by("created_at").values_list("pk", flat=True))
