"""A cell driven from several load hosts at once (issue 15): each load host is a network
namespace with an sshd inside, on a bridge of the test's own (tests/netns.py), and the
private MariaDB listens on that bridge too, so sysbench reaches it as from another
machine. The drivers are a Celery group on the `drivers` queue of a real worker."""

from __future__ import annotations

import json
import os
import signal
import uuid
from collections.abc import Iterator

import pytest
import redis
from celery.contrib.testing.worker import start_worker
from django.conf import settings

from benchdash.celery import app
from runs.analysis.noise import stats
from runs.execution.stream import live
from runs.models import HostSample, LoadHost, Plan, Run, RunHost, Status, Target
from runs.services import batches
from runs.services import plans as plan_checks
from tests.helpers import namespace_load_hosts, wait_for_batch, wait_until
from tests.netns import TestNetwork
from tests.servers import PrivateMariaDB

WHY_NOT = TestNetwork.available()
pytestmark = pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT or "")


@pytest.fixture(scope="module")
def network() -> Iterator[TestNetwork]:
    net = TestNetwork().start()
    try:
        net.add_host()
        net.add_host()
        yield net
    finally:
        net.stop()


@pytest.fixture(scope="module")
def server(network: TestNetwork) -> Iterator[PrivateMariaDB]:
    db = PrivateMariaDB(also_on=network.address, max_connections=40)
    try:
        yield db.start()
    finally:
        db.stop()


@pytest.fixture
def drivers_worker(transactional_db: None) -> Iterator[None]:
    """The batch's task and a driver per host at once: a worker with slots to spare."""
    with start_worker(
        app,
        pool="threads",
        concurrency=4,
        queues=["benchmarks", "celery", "drivers"],
        perform_ping_check=False,
        shutdown_timeout=60,
    ):
        yield


@pytest.fixture
def hosts(transactional_db: None, network: TestNetwork) -> list[LoadHost]:
    return namespace_load_hosts(network, "loadhost-ns")


@pytest.fixture
def plan(transactional_db: None, network: TestNetwork, server: PrivateMariaDB, hosts) -> Plan:
    database = server.create_database(f"multi_{uuid.uuid4().hex[:12]}")
    target = Target.objects.create(
        name="behind the bridge",
        engine="mariadb",
        host=network.address,
        port=server.port,
        database=database,
        user=server.user,
        password=server.password,
    )
    made = Plan.objects.create(
        name="two load hosts",
        target=target,
        load_host=hosts[0],
        test="oltp_point_select",
        options={"time": 4, "report-interval": 1, "tables": 1, "table-size": 1000, "rate": 600},
        threads=[2],
    )
    made.extra_load_hosts.set(hosts[1:])
    return made


def test_a_cell_from_two_load_hosts_sums_them_and_takes_its_percentile_from_their_histograms(
    drivers_worker, plan
):
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=180)
    run = batch.runs.get()
    assert batch.status == Status.DONE, (batch.error, run.error)
    parts = list(run.hosts.order_by("index"))
    assert [p.status for p in parts] == [Status.DONE, Status.DONE]
    assert [(p.threads, p.rate) for p in parts] == [(1, 300), (1, 300)]

    # The cell's throughput is the sum of the hosts' own final reports.
    assert run.summary["tps"] == pytest.approx(sum(p.summary["tps"] for p in parts), abs=0.01)
    assert run.summary["transactions"] == sum(p.summary["transactions"] for p in parts)
    # Its p95 comes from the hosts' histograms summed, never from their p95s averaged.
    summed: dict[float, int] = {}
    for part in parts:
        for value, count in part.histogram:
            summed[value] = summed.get(value, 0) + count
    assert run.summary["latency_pct_ms"] == stats.percentile_from_histogram(summed.items(), 95)

    # Every stored sample of the cell is the sum of the hosts' samples of that tick.
    for sample in run.samples.all():
        own = HostSample.objects.filter(run_host__run=run, time_s=sample.time_s)
        assert own.count() == 2
        assert sample.tps == pytest.approx(sum(h.tps or 0.0 for h in own))
    assert run.samples.count() >= 3
    # The server's counters: the closing reading after both hosts ended, 4 s after the go
    # (later on the sampler's clock, which starts before the hosts are staged), and the
    # run's counter summary made of every reading stored.
    readings = list(run.counter_samples.order_by("seq"))
    assert readings[-1].time_s >= plan.options["time"]
    assert run.counters["readings"] == len(readings) >= 4

    started = run.summary["load_hosts"]
    assert started["load_hosts"] == 2
    assert 0 <= started["start_skew_ms"] < 1000, "both hosts started at the go"
    assert started["barrier_wait_ms"] > 0
    assert {h["host"] for h in started["hosts"]} == {"loadhost-ns1", "loadhost-ns2"}
    assert "[loadhost-ns2]" in run.raw_log


def test_killing_one_hosts_sysbench_fails_the_cell_naming_it_and_stops_the_other(
    drivers_worker, plan
):
    plan.options = {**plan.options, "time": 30}
    plan.save()
    batch = batches.batch_launch(plan=plan)
    pubsub = redis.Redis.from_url(settings.REDIS_URL).pubsub()
    pubsub.subscribe(live.channel(batch.runs.get().pk))
    seen_live: set[str] = set()

    def both_running() -> bool:
        while (message := pubsub.get_message(ignore_subscribe_messages=True)) is not None:
            event = json.loads(message["data"])
            if event["type"] == "host_sample":
                seen_live.add(event["host"])
        parts = RunHost.objects.filter(run__batch=batch, status=Status.RUNNING)
        return parts.count() == 2 and HostSample.objects.filter(run_host__in=parts).count() >= 2

    wait_until(both_running, timeout=90, what="both hosts to run")
    wait_until(lambda: both_running() and len(seen_live) == 2, timeout=10, what="live samples")
    pubsub.close()
    assert seen_live == {"loadhost-ns1", "loadhost-ns2"}, "each host's own samples go out live"
    victim = RunHost.objects.get(run__batch=batch, index=1)
    assert victim.pgid is not None
    os.killpg(victim.pgid, signal.SIGKILL)  # the namespaces share the machine's process ids

    batch = wait_for_batch(batch, timeout=120)
    run: Run = batch.runs.get()
    assert run.status == Status.FAILED
    assert run.error.startswith("load host loadhost-ns2:"), run.error
    assert "the other load hosts were stopped" in run.error
    other = run.hosts.get(index=0)
    assert other.status == Status.CANCELLED
    assert other.finished_at is not None and other.started_at is not None
    assert (other.finished_at - other.started_at).total_seconds() < 25, "stopped early"
    assert run.samples.exists(), "the samples until then are kept"


def test_a_cancel_stops_every_load_host_at_once_not_at_the_next_heartbeat(
    drivers_worker, plan, settings
):
    # A heartbeat far longer than the run: only the cancel itself can stop the hosts early.
    settings.BENCHDASH_HEARTBEAT_SECONDS = 120
    plan.options = {**plan.options, "time": 40}
    plan.save()
    batch = batches.batch_launch(plan=plan)

    def both_sampled() -> bool:
        parts = RunHost.objects.filter(run__batch=batch, status=Status.RUNNING)
        return parts.count() == 2 and HostSample.objects.filter(run_host__in=parts).count() >= 4

    wait_until(both_sampled, timeout=90, what="both hosts to run")
    batches.batch_cancel(batch=batch)
    batch = wait_for_batch(batch, timeout=120)
    run: Run = batch.runs.get()
    assert batch.status == Status.CANCELLED and run.status == Status.CANCELLED
    assert batch.cancel_requested_at is not None
    for part in run.hosts.all():
        # Stopped on the cancel's word, after it, before sysbench's own end (40 s).
        assert part.status == Status.CANCELLED, (part.status, part.error)
        assert part.started_at is not None and part.finished_at is not None
        assert batch.cancel_requested_at < part.finished_at
        ticks = [line for line in part.raw_log.splitlines() if "thds:" in line]
        assert ticks and not ticks[-1].startswith("[ 40s ]")
    assert run.samples.exists(), "the samples until then are kept"


def test_the_preflight_checks_every_load_host_of_the_cell(plan):
    report = plan_checks.plan_preflight(plan=plan)
    assert report.ok, report.failures
    checked = {(c.host, c.check) for c in report.checks}
    assert {("loadhost-ns1", "sysbench"), ("loadhost-ns2", "sysbench")} <= checked
