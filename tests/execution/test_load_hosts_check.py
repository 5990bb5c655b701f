"""What a plan with several load hosts may be: checked before it is saved or launched."""

from __future__ import annotations

import pytest

from runs.errors import InvalidInput
from runs.models import LoadHost, LoadSplit, Plan
from runs.services.plans import plan_check


@pytest.fixture
def ssh_hosts(db) -> list[LoadHost]:
    return [
        LoadHost.objects.create(name=f"far-{i}", kind="ssh", address=f"10.0.0.{i}", user="b")
        for i in (1, 2)
    ]


def plan_on(hosts: list[LoadHost], **fields: object) -> Plan:
    values: dict[str, object] = {"name": "p", "load_host": hosts[0], "test": "cpu"}
    values.update(fields)
    return Plan(**values)


def refusal(plan: Plan, extra: list[LoadHost]) -> InvalidInput:
    with pytest.raises(InvalidInput) as e:
        plan_check(plan=plan, contact_server=False, extra_load_hosts=extra)
    return e.value


def test_a_cell_divides_its_threads_between_ssh_load_hosts(ssh_hosts):
    check = plan_check(
        plan=plan_on(ssh_hosts, threads=[2, 4]),
        contact_server=False,
        extra_load_hosts=ssh_hosts[1:],
    )
    assert check.run_count == 2


def test_the_local_host_cannot_share_a_cell(ssh_hosts, local_host):
    e = refusal(plan_on(ssh_hosts, threads=[2]), [local_host])
    assert e.field == "extra_load_hosts" and "local" in e.message


def test_a_host_named_twice_is_refused(ssh_hosts):
    e = refusal(plan_on(ssh_hosts, threads=[2]), [ssh_hosts[0]])
    assert e.field == "extra_load_hosts"


def test_one_thread_cannot_be_divided_between_two_hosts(ssh_hosts):
    e = refusal(plan_on(ssh_hosts, threads=[1, 2]), ssh_hosts[1:])
    assert e.field == "threads" and "threads=1" in e.message


def test_a_rate_below_one_per_host_cannot_be_divided(ssh_hosts):
    plan = plan_on(ssh_hosts, threads=[2], options={"rate": 1})
    assert refusal(plan, ssh_hosts[1:]).field == "rate"


def test_each_host_may_run_the_cells_threads_instead(ssh_hosts):
    plan = plan_on(ssh_hosts, threads=[1], load_split=LoadSplit.EACH)
    check = plan_check(plan=plan, contact_server=False, extra_load_hosts=ssh_hosts[1:])
    assert check.run_count == 1
