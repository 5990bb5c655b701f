"""The task queue (Redis) fails: a launch while it is down is refused and leaves no queued
batch; a message lost with a Redis restart is handed over again by the sweeper. Each test
breaks a Redis of its own (tests/servers.py PrivateRedis), with benchdash's web server and
worker pointed at it: the shared Redis is never touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchdash import broker
from runs.models import Batch, Plan, Status
from runs.services import tokens
from tests.api.conftest import Api
from tests.helpers import wait_for_batch
from tests.processes import AsgiServer, WorkerProcess

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture
def cpu_plan(local_host, owner) -> Plan:
    # cpu needs no server; two seconds of it.
    return Plan.objects.create(
        name="cpu", load_host=local_host, test="cpu", threads=[1], created_by=owner,
        options={"time": 2, "report-interval": 1, "cpu-max-prime": 2000},
    )  # fmt: skip


@pytest.fixture
def web_on(private_redis, tmp_path: Path):
    servers: list[AsgiServer] = []

    def start() -> AsgiServer:
        env = {"BENCHDASH_REDIS_URL": private_redis.url}
        servers.append(AsgiServer(tmp_path / "uvicorn.log", env=env))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def queued(private_redis, queue: str) -> int:
    # The installation's queue (benchdash/broker.py).
    return int(private_redis.command("LLEN", broker.key_prefix() + queue).strip().lstrip(b":"))


def test_a_launch_while_the_broker_is_down_is_refused_and_leaves_no_queued_batch(
    private_redis, web_on, owner, cpu_plan
):
    private_redis.kill()
    server = web_on()
    api = Api(server.url, tokens.token_create(user=owner, name="t", expires_in=None)[1])

    answer = api.post(f"/api/v1/plans/{cpu_plan.pk}/launch")

    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["field"] is None
    assert "not launched: the task queue (Redis) cannot be reached" in body["message"]
    assert not Batch.objects.filter(status=Status.QUEUED).exists()
    (batch,) = Batch.objects.all()
    assert batch.status == Status.FAILED and batch.error.startswith("not launched: the task queue")
    assert set(batch.runs.values_list("status", flat=True)) == {Status.SKIPPED}

    # The page says so too, and the plan is launched as soon as Redis is back.
    browser = Api(server.url)
    browser.login("owner", "owner-pass-1")
    page = browser.post(f"/plans/{cpu_plan.pk}/launch")
    assert page.status_code == 302
    shown = browser.get(page.headers["Location"]).text
    assert "cannot be launched: the task queue (Redis) cannot be reached" in shown
    assert not Batch.objects.filter(status=Status.QUEUED).exists()

    private_redis.start()
    again = api.post(f"/api/v1/plans/{cpu_plan.pk}/launch")
    assert again.status_code == 201, again.text
    assert queued(private_redis, "benchmarks") == 1


def test_a_batch_whose_message_was_lost_runs_once_the_sweeper_hands_it_over_again(
    private_redis, web_on, owner, cpu_plan, tmp_path
):
    api = Api(web_on().url, tokens.token_create(user=owner, name="t", expires_in=None)[1])
    answer = api.post(f"/api/v1/plans/{cpu_plan.pk}/launch")
    assert answer.status_code == 201, answer.text
    batch = Batch.objects.get(pk=answer.json()["id"])
    assert queued(private_redis, "benchmarks") == 1

    private_redis.restart()  # no persistence: the message is gone, the batch still queued
    assert queued(private_redis, "benchmarks") == 0
    batch.refresh_from_db()
    assert batch.status == Status.QUEUED

    # A worker comes up; its start-up sweep finds the batch queued past the grace period.
    env = {"BENCHDASH_REDIS_URL": private_redis.url, "BENCHDASH_QUEUED_GRACE_SECONDS": "1"}
    worker = WorkerProcess(tmp_path / "worker.log", env=env)
    try:
        batch = wait_for_batch(batch, timeout=120)
    finally:
        worker.stop()

    assert batch.status == Status.DONE, batch.error
    assert [r.status for r in batch.runs.all()] == [Status.DONE]
    # Said on the batch, not only in the worker's log.
    resent = [w for w in batch.warnings if "handed to a worker again" in w]
    assert len(resent) == 1, batch.warnings


def test_a_fresh_queued_batch_is_left_to_its_message(transactional_db, settings, owner, cpu_plan):
    from runs.services import recovery

    settings.BENCHDASH_QUEUED_GRACE_SECONDS = 3600
    fresh = Batch.objects.create(
        plan=cpu_plan, load_host=cpu_plan.load_host, params={}, seed=1, launched_by="api"
    )
    assert recovery.batches_requeue_lost() == []
    fresh.refresh_from_db()
    assert fresh.status == Status.QUEUED
