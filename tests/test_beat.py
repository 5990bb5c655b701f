"""Celery beat through an outage of the results database (benchdash/beat.py): a real
`celery beat` process on a private PostgreSQL and a private Redis, the PostgreSQL stopped
for longer than beat's full re-read of its schedule. Beat lives on, fires on, and sends
tasks once the database is back."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.helpers import wait_until
from tests.processes import ROOT
from tests.servers import PrivatePostgres, PrivateRedis

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

FULL_SYNC_S = 3
OUTAGE_S = 12  # four full re-reads fall into it
EVERY_SECOND = """
import django
django.setup()
from django_celery_beat.models import IntervalSchedule, PeriodicTask
every, _ = IntervalSchedule.objects.get_or_create(every=1, period=IntervalSchedule.SECONDS)
PeriodicTask.objects.create(name="every second", task="runs.tasks.sweep_stale", interval=every)
"""


class Beat:
    """`celery beat` as scripts/start runs it (the scheduler named by the settings)."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "benchdash", "beat", "--max-interval=1",
                 "--loglevel=INFO"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def results_db() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def beat(
    results_db: PrivatePostgres, private_redis: PrivateRedis, tmp_path: Path
) -> Iterator[Beat]:
    env = {
        **results_db.benchdash_env("benchdash_beat"),
        # The production settings: their database connections, kept between ticks.
        "DJANGO_SETTINGS_MODULE": "benchdash.settings",
        "BENCHDASH_REDIS_URL": private_redis.url,
        "BENCHDASH_BEAT_FULL_SYNC_S": str(FULL_SYNC_S),
    }
    subprocess.run([sys.executable, "-c", EVERY_SECOND], cwd=ROOT, env=env, check=True)
    process = Beat(env, tmp_path / "beat.log")
    try:
        yield process
    finally:
        process.stop()


def sent(broker: redis.Redis) -> int:
    """Tasks beat handed to the broker so far (nobody consumes them here), in the queue of
    its installation, named after its database (benchdash/broker.py)."""
    return int(broker.llen("benchdash:benchdash_beat:broker:celery"))


def test_beat_lives_through_a_results_database_outage_longer_than_its_full_sync(
    beat, results_db, private_redis
):
    broker = redis.Redis.from_url(private_redis.url)
    wait_until(lambda: sent(broker) >= 2, timeout=60, what="beat to send its first tasks")

    results_db.stop_server()
    away = sent(broker)
    time.sleep(OUTAGE_S)
    assert beat.process.poll() is None, beat.output()
    # It goes on firing the schedule it read last, while the database is away.
    assert sent(broker) > away, beat.output()

    results_db.start_again()
    back = sent(broker)
    wait_until(lambda: sent(broker) > back + 2, timeout=30, what="beat to send tasks again")
    wait_until(
        lambda: "answers again" in beat.output(), timeout=30, what="beat to see the database"
    )

    output = beat.output()
    assert beat.process.poll() is None, output
    assert "beat raised exception" not in output
    assert output.count("the results database is unreachable") == 1, output  # once an outage


def watch_tasks(broker: redis.Redis) -> int:
    """The watch's tasks among those beat handed to the broker (Celery's message headers
    name the task)."""
    queued = broker.lrange("benchdash:benchdash_beat:broker:celery", 0, -1)
    return sum(b'"task": "runs.tasks.watch_workers"' in message for message in queued)


def test_beat_sends_the_watch_only_when_a_busy_worker_fell_silent(beat, private_redis):
    """Beat looks at the heartbeats every BENCHDASH_WATCH_S in its own tick; an idle
    installation gets no watch task (a message, a task and a database write every 4 s),
    a worker silent while it ran a batch gets one within a watch."""
    broker = redis.Redis.from_url(private_redis.url)
    wait_until(lambda: sent(broker) >= 2, timeout=60, what="beat to tick")
    heartbeats = "benchdash:benchdash_beat:heartbeats"
    now = time.time()
    broker.hset(heartbeats, "worker:busy@vm", json.dumps({"batches": [7], "at": now}))
    time.sleep(6)  # more than a watch: a busy worker that beats is left alone
    assert watch_tasks(broker) == 0, beat.output()

    broker.hset(heartbeats, "worker:busy@vm", json.dumps({"batches": [7], "at": now - 60}))
    wait_until(lambda: watch_tasks(broker) >= 1, timeout=30, what="beat to send the watch's task")
    assert beat.process.poll() is None, beat.output()
