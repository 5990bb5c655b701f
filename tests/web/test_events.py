"""A run's event stream needs Redis only for what is live: with the web server's Redis
down (a private one, killed), a finished run is replayed from the database, and a running
one is followed by reading the database."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests
from django.db import connection
from django.utils import timezone

from runs.execution.stream.live import channel, recent_key
from runs.models import Batch, LoadHost, Plan, Run, Sample, Status
from runs.services import tokens
from runs.web.views import batches as batch_views
from runs.web.views import plans as plan_views
from tests.api.conftest import Api
from tests.helpers import wait_until
from tests.processes import AsgiServer, WorkerProcess

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def web_without_redis(private_redis, tmp_path: Path) -> Iterator[AsgiServer]:
    private_redis.kill()
    server = AsgiServer(tmp_path / "uvicorn.log", env={"BENCHDASH_REDIS_URL": private_redis.url})
    yield server
    server.stop()


def stored_run(status: str, samples: int) -> Run:
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    batch = Batch.objects.create(
        load_host=local, params={}, seed=1, status=status, launched_by="ui"
    )
    run = Run.objects.create(
        batch=batch, position=0, round=0, cell_key="c", threads=1, status=status,
        started_at=timezone.now(),
    )  # fmt: skip
    for seq in range(1, samples + 1):
        add_sample(run, seq)
    return run


def add_sample(run: Run, seq: int) -> None:
    Sample.objects.create(
        run=run, seq=seq, time_s=seq, threads=1, tps=100.0 + seq, received_at=timezone.now()
    )


def read_events(
    url: str, cookies: dict[str, str], events: list[tuple[str, dict]] | None = None
) -> list[tuple[str, dict]]:
    """The stream's events to its end, appended to `events` as they come."""
    events = [] if events is None else events
    event: dict[str, str] = {}
    with requests.get(url, cookies=cookies, stream=True, timeout=60) as response:
        assert response.status_code == 200, response.text
        for line in response.iter_lines(decode_unicode=True):
            if line:
                key, _, value = str(line).partition(": ")
                event[key] = value
                continue
            if "event" in event:
                events.append((event["event"], json.loads(event["data"])))
                if event["event"] == "end":
                    return events
            event = {}
    return events


def test_a_finished_run_is_replayed_while_redis_is_down(web_without_redis, session_cookie):
    run = stored_run(Status.DONE, samples=30)

    events = read_events(f"{web_without_redis.url}/runs/{run.pk}/events", session_cookie)

    kinds = [kind for kind, _ in events]
    assert kinds == ["status"] + ["sample"] * 30 + ["end"]
    assert [data["seq"] for kind, data in events if kind == "sample"] == list(range(1, 31))
    assert events[0][1]["status"] == Status.DONE


def test_a_running_run_is_followed_from_the_database_while_redis_is_down(
    web_without_redis, session_cookie
):
    run = stored_run(Status.RUNNING, samples=3)

    events: list[tuple[str, dict]] = []

    def worker_goes_on() -> None:
        try:
            # Once the viewer is following: what it sees next comes from the database.
            wait_until(lambda: len(events) >= 4, timeout=30, what="the replay")
            for seq in (4, 5, 6):
                time.sleep(0.5)
                add_sample(run, seq)
            Run.objects.filter(pk=run.pk).update(status=Status.DONE, finished_at=timezone.now())
        finally:
            connection.close()  # this thread's own

    # The rows a thread writes are committed: the web server reads them.
    thread = threading.Thread(target=worker_goes_on)
    thread.start()
    read_events(f"{web_without_redis.url}/runs/{run.pk}/events", session_cookie, events)
    thread.join()

    samples = [data["seq"] for kind, data in events if kind == "sample"]
    assert samples == [1, 2, 3, 4, 5, 6]
    statuses = [data["status"] for kind, data in events if kind == "status"]
    assert statuses == [Status.RUNNING, Status.DONE] and events[-1][0] == "end"


def test_a_followed_run_holds_no_turn_of_the_pages(transactional_db, tmp_path, session_cookie):
    # One process, one turn: had the two open streams taken it, the page would wait forever.
    run = stored_run(Status.RUNNING, samples=2)
    server = AsgiServer(tmp_path / "uvicorn.log", env={"BENCHDASH_WEB_TURNS": "1"})
    url = f"{server.url}/runs/{run.pk}/events"
    streams: list[requests.Response] = []
    try:
        for _ in range(2):
            streams.append(requests.get(url, cookies=session_cookie, stream=True, timeout=30))
        assert all(s.status_code == 200 for s in streams)
        page = requests.get(f"{server.url}/targets/", cookies=session_cookie, timeout=10)
        assert page.status_code == 200 and "Targets" in page.text
    finally:
        for stream in streams:
            stream.close()
        server.stop()


def test_the_event_stream_stays_async_and_the_pages_stay_sync():
    assert asyncio.iscoroutinefunction(batch_views.run_events)
    for view in (batch_views.home, batch_views.batch_detail, plan_views.plan_edit):
        assert not asyncio.iscoroutinefunction(view)


# --- a viewer joining right after a Redis restart (a private Redis, a real worker) ----------


@pytest.fixture
def on_private_redis(transactional_db, private_redis, tmp_path: Path):
    """A web server and a worker on a Redis of the test's own; heartbeats as in production
    (5 s), so that samples wait in the worker for the database as long as they do there."""
    env = {"BENCHDASH_REDIS_URL": private_redis.url, "BENCHDASH_HEARTBEAT_SECONDS": "5"}
    worker = WorkerProcess(tmp_path / "worker.log", env=env)
    server = AsgiServer(tmp_path / "uvicorn.log", env=env)
    yield server
    server.stop()
    worker.stop()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_viewer_joining_right_after_a_redis_restart_gets_every_sample_once(
    private_redis, on_private_redis, django_user_model, session_cookie
):
    owner = django_user_model.objects.create_user("owner", password="owner-pass-1")
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name="cpu", load_host=local, test="cpu", threads=[1], created_by=owner,
        options={"time": 15, "report-interval": 1, "cpu-max-prime": 2000},
    )  # fmt: skip
    api = Api(on_private_redis.url, tokens.token_create(user=owner, name="t", expires_in=None)[1])
    answer = api.post(f"/api/v1/plans/{plan.pk}/launch")
    assert answer.status_code in (201, 202), answer.text
    batch = Batch.objects.get(pk=answer.json()["id"])
    wait_until(lambda: Run.objects.filter(batch=batch, status=Status.RUNNING).exists(),
               timeout=60, what="the run")  # fmt: skip
    run = batch.runs.get()
    time.sleep(6.5)  # some samples stored, the last few only in Redis and the worker

    private_redis.restart()
    events = read_events(f"{on_private_redis.url}/runs/{run.pk}/events", session_cookie)

    batch.refresh_from_db()
    stored = list(run.samples.order_by("seq").values_list("seq", flat=True))
    seen = [data["seq"] for kind, data in events if kind == "sample"]
    print(f"\nafter a Redis restart, the viewer got {len(seen)} of {len(stored)} samples")
    assert len(stored) >= 14
    assert seen == stored  # all, in order, once
    assert not [data for kind, data in events if kind == "gap"]


def test_a_gap_the_database_cannot_fill_is_told_to_the_viewer(
    private_redis, tmp_path: Path, session_cookie
):
    run = stored_run(Status.RUNNING, samples=3)
    sample_6 = {"seq": 6, "time_s": 6.0, "threads": 1, "tps": 106.0, "received_at": 0.0}
    live = redis.Redis.from_url(private_redis.url)
    live.rpush(recent_key(run.pk), json.dumps({"type": "sample", "sample": sample_6}))
    server = AsgiServer(tmp_path / "uvicorn.log", env={"BENCHDASH_REDIS_URL": private_redis.url})
    events: list[tuple[str, dict]] = []

    def run_ends() -> None:
        wait_until(lambda: ("sample", sample_6) in events, timeout=30, what="sample 6")
        done = {"type": "status", "status": "done", "error": "", "hint": "",
                "started_at": None, "finished_at": None}  # fmt: skip
        live.publish(channel(run.pk), json.dumps(done))

    thread = threading.Thread(target=run_ends)
    thread.start()
    try:
        read_events(f"{server.url}/runs/{run.pk}/events", session_cookie, events)
    finally:
        thread.join()
        server.stop()

    kinds = [kind for kind, _ in events]
    assert kinds == ["status", "sample", "sample", "sample", "gap", "sample", "status", "end"]
    assert events[4][1] == {"after": 3, "before": 6, "missing": 2}


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_live_events_lost_with_redis_are_told_on_the_run(
    private_redis, on_private_redis, django_user_model
):
    owner = django_user_model.objects.create_user("owner", password="owner-pass-1")
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name="cpu", load_host=local, test="cpu", threads=[1], created_by=owner,
        options={"time": 10, "report-interval": 1, "cpu-max-prime": 2000},
    )  # fmt: skip
    api = Api(on_private_redis.url, tokens.token_create(user=owner, name="t", expires_in=None)[1])
    batch = Batch.objects.get(pk=api.post(f"/api/v1/plans/{plan.pk}/launch").json()["id"])
    wait_until(lambda: Run.objects.filter(batch=batch, status=Status.RUNNING).exists(),
               timeout=60, what="the run")  # fmt: skip
    time.sleep(2)

    private_redis.kill()
    time.sleep(3)  # three samples published to no one
    private_redis.start()
    wait_until(lambda: Batch.objects.get(pk=batch.pk).finished_at is not None, 90, "the end")

    run = batch.runs.get()
    lost = [w for w in run.warnings if "not published live" in w]
    assert len(lost) == 1, run.warnings
    assert run.samples.count() >= 9  # the database has them all the same
