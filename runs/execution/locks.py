"""One benchmark per server and per load host at a time, and claiming a batch to run.

Two benchmarks against one server ruin both, and two on one load host compete for its
CPUs. A batch holds a ResourceLock row per resource while it runs; the unique resource
name makes the database itself refuse a second holder, so this holds across workers.
"""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from runs.execution.server_targets import target_ids
from runs.frozen import FrozenPlan
from runs.models import Batch, LoadHost, ResourceLock, Status, Target

logger = logging.getLogger(__name__)


def _resources(batch: Batch) -> list[str]:
    # Every target of a servers axis: its cells run interleaved, so all are held throughout.
    names = [f"target:{i}" for i in target_ids(batch)]
    if batch.load_host_id is not None:
        names.append(f"loadhost:{batch.load_host_id}")
    # A cell from several load hosts holds every one of them.
    names += [f"loadhost:{i}" for i in FrozenPlan.from_params(batch.params).extra_load_hosts]
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


def locks_holder(*, batch: Batch) -> str:
    """What holds one of the batch's resources now, or "": a batch launched meanwhile
    says it is waiting, and for what, before a worker even picks it up."""
    holder = (
        ResourceLock.objects.filter(resource__in=_resources(batch))
        .exclude(batch=batch)
        .select_related("batch__target", "batch__load_host")
        .first()
    )
    return _describe(holder) if holder is not None else ""


def _describe(lock: ResourceLock) -> str:
    kind, key = lock.resource.split(":", 1)
    batch = lock.batch
    if kind == "target":
        name = Target.objects.filter(pk=int(key)).values_list("name", flat=True).first()
        what = f"target {name or batch.target}"
    else:
        name = LoadHost.objects.filter(pk=int(key)).values_list("name", flat=True).first()
        what = f"load host {name}"
    return f"{what} is busy with batch {batch.pk}"


def locks_release(*, batch: Batch) -> list[int]:
    """Free the batch's locks; returns the waiting batches that may go on now, oldest
    first, for the caller to hand to a worker once this is committed."""
    ResourceLock.objects.filter(batch=batch).delete()
    waiting = Batch.objects.filter(status=Status.WAITING).exclude(pk=batch.pk)
    related = Q()
    ids = target_ids(batch)
    if ids:
        related |= Q(target_id__in=ids)
    if batch.load_host_id is not None:
        related |= Q(load_host_id=batch.load_host_id)
    return list(waiting.filter(related).order_by("created_at").values_list("pk", flat=True))


@transaction.atomic
def batch_claim(*, batch_id: int, worker: str) -> bool:
    """Take the batch if it is still to run and its server and load host are free."""
    batch = (
        Batch.objects.select_for_update(skip_locked=True)
        .filter(pk=batch_id, status__in=[Status.QUEUED, Status.WAITING])
        .first()
    )
    if batch is None:
        return False
    waiting_for = locks_acquire(batch=batch)
    if waiting_for:
        batch.status = Status.WAITING
        batch.waiting_for = waiting_for
        batch.save(update_fields=["status", "waiting_for"])
        return False
    now = timezone.now()
    Batch.objects.filter(pk=batch_id).update(
        status=Status.RUNNING,
        worker=worker,
        heartbeat_at=now,
        started_at=Coalesce(F("started_at"), Value(now)),
        waiting_for="",
    )
    return True
