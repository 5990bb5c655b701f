"""Locks over a servers axis: a batch holds every one of its targets, so that no other
batch measures any of them meanwhile, and frees them all at its end."""

from __future__ import annotations

from runs.execution import locks
from runs.models import LoadHost, Plan, ResourceLock, Status, Target
from tests.stored import bare_batch


def target(name: str, port: int) -> Target:
    return Target.objects.create(
        name=name, engine="mariadb", host="127.0.0.1", port=port, database="sbtest",
        user="bench",
    )  # fmt: skip


def test_a_batch_over_two_targets_holds_both_and_frees_both(db):
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    stored_plan = Plan.objects.create(
        name="servers", target=target("db-1", 3999), load_host=local, threads=[1]
    )
    second = target("db-2", 3998)
    targets_axis = [
        {"id": stored_plan.target_id, "name": "db-1"},
        {"id": second.pk, "name": "db-2"},
    ]
    both = bare_batch(stored_plan, params={"test": "oltp_insert", "targets": targets_axis})
    on_second = bare_batch(stored_plan, target=second, params={"test": "oltp_insert"})

    assert locks.locks_acquire(batch=both) == ""
    held = set(ResourceLock.objects.filter(batch=both).values_list("resource", flat=True))
    assert {f"target:{stored_plan.target_id}", f"target:{second.pk}"} <= held
    assert locks.locks_acquire(batch=on_second) == f"target db-2 is busy with batch {both.pk}"

    on_second.status = Status.WAITING
    on_second.save(update_fields=["status"])
    assert locks.locks_release(batch=both) == [on_second.pk]  # woken: its server is free
    assert locks.locks_acquire(batch=on_second) == ""
