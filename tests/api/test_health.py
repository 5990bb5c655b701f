"""The health endpoint, page, banner and `benchdash health`: a real worker beats and is
listed alive; an old heartbeat of beat makes the banner show and the API answer 503; a
queued batch's reason is the one of now."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from runs.execution import liveness, locks
from runs.models import Status
from runs.services import batches, health
from tests.helpers import wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def heartbeats(transactional_db):
    """The heartbeats hash, empty at the start and at the end of the test."""
    client = liveness._client()
    client.delete(liveness._key())
    yield client
    client.delete(liveness._key())


def beat_at(client, name: str, seconds_ago: float) -> None:
    client.hset(liveness._key(), name, orjson.dumps({"at": time.time() - seconds_ago}))


def test_a_real_worker_is_listed_alive_and_an_old_beat_is_said(
    heartbeats, worker_process, api, live_server
):
    worker = worker_process("healthy")
    wait_until(
        lambda: any(w.alive for w in health.health_report().workers), 60, "the worker to beat"
    )
    report = health.health_report()
    (listed,) = report.workers
    assert listed.name.startswith("healthy@")
    assert set(listed.queues) == {"benchmarks", "celery"}

    liveness.process_beat(name=liveness.SWEEPER, report={"recovered": []})
    beat_at(heartbeats, liveness.BEAT, 1)
    answer = api.get("/api/v1/health")
    assert answer.status_code == 200, answer.text
    assert answer.json()["healthy"] is True
    assert answer.json()["database"]["reachable"] is True

    beat_at(heartbeats, liveness.BEAT, 600)  # beat stopped ten minutes ago
    answer = api.get("/api/v1/health")
    assert answer.status_code == 503
    body = answer.json()
    assert body["beat"]["alive"] is False
    assert any(p.startswith("beat stopped beating") for p in body["problems"])
    assert [w["name"] for w in body["workers"] if w["alive"]] == [listed.name]

    api.login("owner", "owner-pass-1")
    del api.session.headers["Authorization"]
    page = api.get("/")
    assert "Beat (schedules and the sweeper) stopped" in page.text
    page = api.get("/health")
    assert page.status_code == 200
    assert listed.name in page.text and "beat stopped beating" in page.text

    worker.stop()  # a worker that stops removes its heartbeat
    assert all(not w.name.startswith("healthy@") for w in health.health_report().workers)


def test_benchdash_health_prints_it_and_exits_1_when_unhealthy(
    heartbeats, live_server, owner_token
):
    beat_at(heartbeats, liveness.BEAT, 600)
    done = subprocess.run(
        [sys.executable, "-m", "benchdash_cli", "health"],
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "BENCHDASH_URL": live_server.url,
            "BENCHDASH_TOKEN": owner_token,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("UNHEALTHY\n")
    assert "beat: gone, last heartbeat" in done.stdout
    assert "database: reachable" in done.stdout


def test_a_waiting_reason_names_the_current_holder(api, make_plan):
    first = batches.batch_launch(plan=make_plan(), launched_by="api")
    assert locks.batch_claim(batch_id=first.pk, worker="w@h")
    second = batches.batch_launch(plan=make_plan(), launched_by="api")
    assert second.status == Status.WAITING
    assert (
        f"busy with batch {first.pk}"
        in api.get(f"/api/v1/batches/{second.pk}").json()["waiting_for"]
    )
    # The first ends; the second's message waits behind a busy worker.
    locks.locks_release(batch=first)
    type(first).objects.filter(pk=first.pk).update(status=Status.DONE)

    shown = api.get(f"/api/v1/batches/{second.pk}").json()["waiting_for"]
    assert f"batch {first.pk}" not in shown
    listed = [b for b in api.all_pages("/api/v1/batches") if b["id"] == second.pk]
    assert f"batch {first.pk}" not in listed[0]["waiting_for"]


def test_the_web_is_listed_once_it_beats_and_said_gone_once_silent(heartbeats, api):
    assert health.health_report().web is None  # never beat (the test client): nothing said
    liveness.process_beat(name=health.WEB, report={"pid": 12, "supervisor": 11})
    body = api.get("/api/v1/health").json()
    assert body["web"]["alive"] is True and body["web"]["report"]["supervisor"] == 11
    assert not [p for p in body["problems"] if p.startswith("web ")]

    beat_at(heartbeats, health.WEB, 600)  # its supervisor died ten minutes ago
    answer = api.get("/api/v1/health")
    assert answer.status_code == 503
    assert answer.json()["web"]["alive"] is False
    assert any(
        p.startswith("web stopped beating") and p.endswith("runs under its supervisor")
        for p in answer.json()["problems"]
    )
