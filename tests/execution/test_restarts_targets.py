"""A restart-only axis on a plan over two targets, each a managed mariadbd of the test's
own: each target restarted with its own state (`Batch.put_back` by target), its cells
interleaved with the other's round by round, every setting read back, and each put back
at the batch's end, or by the sweeper after the worker died; a target of the axis that
never restarts is refused by name, by the plan's checks and by the worker's preflight."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from runs.errors import InvalidInput
from runs.models import Batch, Plan, PlanServer, Sample, Status, Target
from runs.services import batches, plans
from tests.execution.test_restart_failures import other_than
from tests.execution.test_restarts import (
    METHOD,
    make_plan,
    managed_start,
    managed_stop,
    managed_target,
)
from tests.helpers import global_variable, wait_for_batch, wait_until
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

TINY = {"time": 2, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 20}


@pytest.fixture
def managed_pair() -> Iterator[list[PrivateMariaDB]]:
    servers = [PrivateMariaDB(), PrivateMariaDB()]
    try:
        yield [managed_start(server) for server in servers]
    finally:
        for server in servers:
            managed_stop(server)


def two_target_plan(servers: list[PrivateMariaDB], host, **fields: object) -> Plan:
    first, second = (managed_target(server) for server in servers)
    values: dict[str, object] = {
        "options": TINY,
        "server_settings": {METHOD: ["fsync", "O_DIRECT"]},
        "servers": {"after_restart": "cold"},
        **fields,
    }
    plan = make_plan(first, host, **values)
    PlanServer.objects.create(plan=plan, target=second, position=1)
    return plan


def test_each_target_of_the_axis_is_restarted_verified_and_put_back(
    celery_worker, local_host, managed_pair
):
    plan = two_target_plan(managed_pair, local_host, repeats=2)
    first, second = plan.target, plan.plan_servers.get().target
    assert first is not None
    servers = {first.pk: managed_pair[0], second.pk: managed_pair[1]}
    names = {first.pk: first.name, second.pk: second.name}
    originals = {pk: global_variable(server, METHOD) for pk, server in servers.items()}
    assert all(cell.restart_key for cell in plans.plan_check(plan=plan).cells)

    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    runs = list(batch.runs.order_by("position"))
    for run in runs:  # read back on the run's own server, after its own restart
        assert run.verified_settings[METHOD] == run.settings[METHOD], run.label
        assert run.environment["restart"]["settings"] == {METHOD: run.settings[METHOD]}
        assert run.environment["target"]["id"] == run.target_id
    for round_number in (0, 1):  # both servers in every round
        assert {r.target_id for r in runs if r.round == round_number} == set(servers)
    for pk, server in servers.items():
        name = names[pk]
        stages = [
            s for s in batch.stages if s.get("target") == pk and s["kind"] in ("restart", "restore")
        ]
        kinds = [s["kind"] for s in stages]
        assert kinds[0] == "restart" and kinds[-1] == "restore", kinds
        assert kinds.count("restore") == 1, kinds  # once, at the end
        assert all(s["ok"] and name in s["reason"] for s in stages), stages
        assert batch.put_back[str(pk)]["running"] is None
        assert global_variable(server, METHOD) == originals[pk]  # its original runs again


def test_a_target_of_the_axis_that_never_restarts_is_refused_by_name(
    worker_process, local_host, managed_pair
):
    plan = two_target_plan(managed_pair, local_host)
    second = plan.plan_servers.get().target
    opted_in = second.restart_config
    Target.objects.filter(pk=second.pk).update(restart_mode="", restart_config={})
    plan = Plan.objects.get(pk=plan.pk)

    with pytest.raises(InvalidInput, match=f"{second.name} never restarts") as refused:
        plans.plan_check(plan=plan, contact_server=False)
    assert refused.value.field == "servers.targets"
    report = plans.plan_preflight(plan=plan)
    assert not report.ok and second.name in "\n".join(report.failures)

    # Opted out after the launch: the worker's own preflight refuses it, before any restart.
    Target.objects.filter(pk=second.pk).update(restart_mode="managed", restart_config=opted_in)
    batch = batches.batch_launch(plan=Plan.objects.get(pk=plan.pk))
    Target.objects.filter(pk=second.pk).update(restart_mode="", restart_config={})
    worker_process()
    batch = wait_for_batch(batch, timeout=200)

    assert batch.status == Status.FAILED
    assert f"restart on {second.name}: this target never restarts" in batch.error
    assert not [s for s in batch.stages if s["kind"] in ("restart", "restore")]
    assert not batch.put_back


def test_a_worker_killed_the_sweeper_puts_back_every_target_it_changed(
    worker_process, local_host, managed_pair
):
    originals = [global_variable(server, METHOD) for server in managed_pair]
    assert originals[0] == originals[1]  # one value other than both originals
    changed = other_than(originals[0])
    plan = two_target_plan(
        managed_pair,
        local_host,
        options={**TINY, "time": 12, "rate": 10},
        server_settings={METHOD: [changed]},
    )
    first = worker_process()
    batch = batches.batch_launch(plan=plan)
    wait_until(
        lambda: Sample.objects.filter(run__batch=batch, run__position=0).count() >= 2,
        timeout=150,
        what="two samples of the first run",
    )
    # Both servers were restarted before the data set was prepared on each.
    assert [global_variable(server, METHOD) for server in managed_pair] == [changed] * 2

    first.kill()
    time.sleep(6)  # the heartbeat goes stale (5 s in the test settings)
    worker_process()  # its start-up sweep puts both back, then the batch resumes
    batch = wait_for_batch(batch, timeout=250)

    swept = [s for s in batch.stages if s["kind"] == "restore" and "sweeper" in s["reason"]]
    assert {s["target"] for s in swept} == {plan.target_id, plan.plan_servers.get().target_id}
    assert all(s["ok"] for s in swept), swept
    assert batch.status == Status.DONE, batch.error
    assert [global_variable(server, METHOD) for server in managed_pair] == originals
    states = Batch.objects.get(pk=batch.pk).put_back.values()
    assert all(state.get("running") is None for state in states)
