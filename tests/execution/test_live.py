"""Live: samples reach an SSE client in order and exactly once, cancel, timeout, SIGTERM,
and one benchmark per server at a time."""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
import requests

from runs.models import Batch, Run, Sample, Status
from runs.services import batches
from tests.helpers import global_variable, wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SLOW_RUN = {"time": 8, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10}


def read_events(url, cookies, *, headers=None, stop_after_samples=None):
    """Read an SSE stream; returns (samples, statuses), stopping at `end` or early."""
    samples, statuses = [], []
    with requests.get(url, cookies=cookies, headers=headers, stream=True, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        event = {}
        for raw in response.iter_lines(decode_unicode=True):
            if raw:
                key, _, value = str(raw).partition(": ")
                event[key] = value
                continue
            if event.get("event") == "sample":
                sample = json.loads(event["data"])
                assert event["id"] == str(sample["seq"])
                samples.append(sample)
                if stop_after_samples and len(samples) >= stop_after_samples:
                    break
            elif event.get("event") == "status":
                statuses.append(json.loads(event["data"])["status"])
            elif event.get("event") == "end":
                break
            event = {}
    return samples, statuses


def wait_for_samples(batch, count, position=0):
    wait_until(
        lambda: Sample.objects.filter(run__batch=batch, run__position=position).count() >= count,
        timeout=90,
        what=f"{count} samples",
    )


def sysbench_alive(pgid: int | None) -> bool:
    if pgid is None:
        return False
    try:
        stat = Path(f"/proc/{pgid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def test_an_sse_client_joining_mid_run_gets_every_sample_once_in_order(
    celery_worker, asgi_server, session_cookie, make_plan
):
    batch = batches.batch_launch(plan=make_plan(test="oltp_read_only", options=SLOW_RUN))
    wait_for_samples(batch, 3)
    run = batch.runs.get()

    samples, statuses = read_events(f"{asgi_server.url}/runs/{run.pk}/events", session_cookie)

    wait_for_batch(batch)
    stored = list(run.samples.order_by("seq").values_list("seq", flat=True))
    assert [s["seq"] for s in samples] == stored
    assert len(stored) >= 6
    assert statuses[0] == "running" and statuses[-1] == "done"


def test_a_reconnect_with_last_event_id_misses_nothing(
    celery_worker, asgi_server, session_cookie, make_plan
):
    batch = batches.batch_launch(plan=make_plan(test="oltp_read_only", options=SLOW_RUN))
    wait_for_samples(batch, 1)
    run = batch.runs.get()
    url = f"{asgi_server.url}/runs/{run.pk}/events"

    first, _ = read_events(url, session_cookie, stop_after_samples=3)
    last_id = first[-1]["seq"]
    rest, _ = read_events(url, session_cookie, headers={"Last-Event-ID": str(last_id)})

    wait_for_batch(batch)
    seqs = [s["seq"] for s in first + rest]
    assert seqs == list(run.samples.order_by("seq").values_list("seq", flat=True))


def test_the_events_stream_needs_a_login(celery_worker, asgi_server, make_plan):
    batch = batches.batch_launch(plan=make_plan())
    run = batch.runs.get()

    response = requests.get(
        f"{asgi_server.url}/runs/{run.pk}/events", allow_redirects=False, timeout=10
    )

    assert response.status_code == 302
    assert "/accounts/login/" in response.headers["Location"]
    wait_for_batch(batch)


def test_cancel_stops_sysbench_keeps_samples_skips_the_rest_and_restores(
    celery_worker, make_plan, mariadb_server
):
    original = global_variable(mariadb_server, "innodb_flush_log_at_trx_commit")
    plan = make_plan(
        test="oltp_read_only",
        options={**SLOW_RUN, "time": 20},
        server_settings={"innodb_flush_log_at_trx_commit": ["0", "2"]},
        repeats=2,
    )
    batch = batches.batch_launch(plan=plan)
    wait_for_samples(batch, 2)

    batches.batch_cancel(batch=batch)

    batch = wait_for_batch(batch, timeout=60)
    assert batch.status == Status.CANCELLED
    cancelled = batch.runs.get(position=0)
    assert cancelled.status == Status.CANCELLED
    assert cancelled.samples.count() >= 2
    assert not sysbench_alive(cancelled.pgid)
    assert set(batch.runs.exclude(position=0).values_list("status", flat=True)) == {Status.SKIPPED}
    assert [s["kind"] for s in batch.stages] == ["prepare", "cleanup"]
    assert global_variable(mariadb_server, "innodb_flush_log_at_trx_commit") == original


def test_cancelling_a_queued_batch_ends_it_at_once(transactional_db, make_plan):
    batch = batches.batch_launch(plan=make_plan())  # no worker: it stays queued

    batch = batches.batch_cancel(batch=batch)

    assert batch.status == Status.CANCELLED
    assert batch.runs.get().status == Status.SKIPPED


def test_two_batches_on_one_target_never_overlap(two_celery_workers, make_plan):
    first = batches.batch_launch(plan=make_plan(test="oltp_read_only", options=SLOW_RUN))
    wait_for_samples(first, 1)
    second = batches.batch_launch(plan=make_plan(test="oltp_read_only", options=SLOW_RUN))

    wait_until(
        lambda: Batch.objects.get(pk=second.pk).status == Status.WAITING,
        timeout=30,
        what="the second batch to wait",
    )
    second.refresh_from_db()
    assert f"busy with batch {first.pk}" in second.waiting_for

    first, second = wait_for_batch(first), wait_for_batch(second, timeout=120)
    assert first.status == second.status == Status.DONE
    ends = [r.finished_at for r in first.runs.all()]
    starts = [r.started_at for r in second.runs.all()]
    assert None not in ends and None not in starts
    assert max(e for e in ends if e) <= min(s for s in starts if s)
    assert first.finished_at is not None and first.finished_at <= min(s for s in starts if s)


def test_a_batch_launched_on_a_busy_target_waits_at_once_saying_for_what(celery_worker, make_plan):
    # One worker: the second batch is not picked up while the first runs, yet it says
    # `waiting`, not `queued`, from its launch on.
    first = batches.batch_launch(plan=make_plan(test="oltp_read_only", options=SLOW_RUN))
    wait_for_samples(first, 1)

    second = batches.batch_launch(plan=make_plan(test="oltp_read_only", options=SLOW_RUN))

    assert second.status == Status.WAITING
    assert second.waiting_for == f"target {first.target} is busy with batch {first.pk}"
    first, second = wait_for_batch(first), wait_for_batch(second, timeout=120)
    assert first.status == second.status == Status.DONE
    assert second.waiting_for == ""


def test_a_run_past_its_time_limit_is_stopped_and_failed(
    celery_worker, make_plan, mariadb_server, target
):
    batch = batches.batch_launch(
        plan=make_plan(test="oltp_read_only", options={**SLOW_RUN, "time": 4})
    )
    wait_for_samples(batch, 1)
    # A write lock on the table blocks every query: sysbench cannot end on time.
    holder = mariadb_server.root_connect(target.database)
    holder.cursor().execute("LOCK TABLES sbtest1 WRITE")
    run = batch.runs.get()
    try:
        wait_until(
            lambda: Run.objects.get(pk=run.pk).status == Status.FAILED,
            timeout=60,
            what="the timeout",
        )
    finally:
        holder.cursor().execute("UNLOCK TABLES")
        holder.close()

    batch = wait_for_batch(batch)
    run.refresh_from_db()
    assert run.error.startswith("timed out")
    assert run.error_kind == "timeout"
    assert run.samples.count() >= 1
    assert not sysbench_alive(run.pgid)


def test_sigterm_interrupts_the_run_and_a_new_worker_resumes_the_batch(worker_process, make_plan):
    plan = make_plan(
        test="oltp_read_only",
        options={**SLOW_RUN, "time": 15},
        threads=[1, 2],
        order_policy="ramp",
    )
    worker = worker_process()
    batch = batches.batch_launch(plan=plan)
    wait_for_samples(batch, 2)

    exit_code = worker.terminate()

    assert exit_code == 0
    interrupted = batch.runs.get(position=0)
    assert interrupted.status == Status.INTERRUPTED
    assert interrupted.samples.count() >= 2
    assert not sysbench_alive(interrupted.pgid)
    batch.refresh_from_db()
    assert batch.status == Status.QUEUED

    worker_process()
    batch = wait_for_batch(batch, timeout=120)

    assert batch.status == Status.DONE
    assert batch.runs.get(position=1).status == Status.DONE
    assert batch.runs.count() == 2


def test_samples_are_published_live_on_the_runs_channel(celery_worker, make_plan):
    """Each sample goes out on the run's Redis channel as its line is parsed."""
    import redis
    from django.conf import settings

    from runs.execution.stream import live

    batch = batches.batch_launch(plan=make_plan(test="oltp_read_only", options=SLOW_RUN))
    run = batch.runs.get()
    client = redis.Redis.from_url(settings.REDIS_URL)
    pubsub = client.pubsub()
    pubsub.subscribe(live.channel(run.pk))
    received: list[dict] = []

    def listen() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(received) < 3:
            message = pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
            if message:
                event = json.loads(message["data"])
                if event["type"] == "samples":  # those of one read, in one message
                    received.extend(event["samples"])

    listener = threading.Thread(target=listen)
    listener.start()
    listener.join()
    pubsub.close()
    wait_for_batch(batch)
    assert [s["seq"] for s in received] == sorted({s["seq"] for s in received})
    assert len(received) >= 3


def test_an_installation_never_sees_the_live_events_of_another_on_the_same_redis(settings):
    """Pub/sub ignores Redis' database number and run ids repeat between installations:
    the channel names the installation (by default, its results database)."""
    import redis
    from django.db import connection
    from django.utils import timezone

    from runs.execution.stream import live
    from runs.models import Sample

    settings.BENCHDASH_INSTALLATION = ""
    assert connection.settings_dict["NAME"] in live.channel(7)

    def publish(installation: str, seq: int) -> None:
        settings.BENCHDASH_INSTALLATION = installation
        sample = Sample(run_id=7, seq=seq, time_s=seq, threads=1, tps=1.0)
        sample.received_at = timezone.now()
        live.publish_sample(7, sample)

    settings.BENCHDASH_INSTALLATION = "ours"
    pubsub = redis.Redis.from_url(settings.REDIS_URL).pubsub()
    pubsub.subscribe(live.channel(7))
    assert pubsub.get_message(timeout=5)["type"] == "subscribe"
    publish("theirs", 1)
    publish("ours", 2)
    received = []
    while (message := pubsub.get_message(timeout=1)) is not None:
        received += [s["seq"] for s in json.loads(message["data"])["samples"]]
    pubsub.close()
    assert received == [2]


def test_an_error_answer_is_read_at_the_next_publish_which_goes_out_all_the_same(settings, caplog):
    """The worker does not wait for Redis' answers: it reads them at its next publish. An
    error among them is logged there, and that publish, on a fresh connection, goes out."""
    import redis
    from django.utils import timezone

    from runs.execution.stream import live

    run_id = 919191
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.set(live.recent_key(run_id), "not a list")  # the next RPUSH answers WRONGTYPE
    pubsub = client.pubsub()
    pubsub.subscribe(live.channel(run_id))
    assert pubsub.get_message(timeout=5)["type"] == "subscribe"

    def publish(seq: int) -> None:
        sample = Sample(run_id=run_id, seq=seq, time_s=seq, threads=1, tps=1.0)
        sample.received_at = timezone.now()
        live.publish_sample(run_id, sample)

    def received() -> list[int]:
        message = pubsub.get_message(ignore_subscribe_messages=True, timeout=5)
        assert message is not None
        return [s["seq"] for s in json.loads(message["data"])["samples"]]

    publish(1)
    assert received() == [1]  # published after the failed RPUSH: that one is done too
    client.delete(live.recent_key(run_id))
    with caplog.at_level(logging.WARNING, logger="runs.execution.stream.live"):
        publish(2)
    assert received() == [2]
    assert "WRONGTYPE" in caplog.text
    assert [s["seq"] for s in live.recent_samples(run_id)] == [2]
    pubsub.close()
    client.delete(live.recent_key(run_id))


def test_a_cancel_is_acted_on_at_once_not_at_the_next_heartbeat(
    celery_worker, make_plan, mariadb_server, settings
):
    # A heartbeat far longer than the run: only the cancel itself can stop sysbench early.
    settings.BENCHDASH_HEARTBEAT_SECONDS = 60
    original = global_variable(mariadb_server, "innodb_flush_log_at_trx_commit")
    plan = make_plan(
        test="oltp_read_only",
        options={**SLOW_RUN, "time": 30},
        server_settings={"innodb_flush_log_at_trx_commit": ["0"]},
    )
    batch = batches.batch_launch(plan=plan)
    wait_until(lambda: Run.objects.filter(batch=batch, status=Status.RUNNING, pgid__isnull=False)
               .exists(), timeout=60, what="sysbench running")  # fmt: skip
    run = batch.runs.get()
    time.sleep(2)  # a few samples in

    asked = time.monotonic()
    batches.batch_cancel(batch=batch)
    wait_until(lambda: not sysbench_alive(run.pgid), timeout=90, what="sysbench stopped")
    stopped_s = time.monotonic() - asked
    batch = wait_for_batch(batch, timeout=90)
    ended_s = time.monotonic() - asked
    print(f"\ncancel: sysbench stopped {stopped_s:.2f} s and the batch ended {ended_s:.2f} s "
          "after it was asked")  # fmt: skip

    run.refresh_from_db()
    assert batch.status == Status.CANCELLED and run.status == Status.CANCELLED
    # Stopped before the next heartbeat (60 s) and before sysbench's own end (30 s).
    assert run.finished_at is not None and batch.cancel_requested_at is not None
    assert run.finished_at < batch.cancel_requested_at + timedelta(seconds=20)
    assert global_variable(mariadb_server, "innodb_flush_log_at_trx_commit") == original


def test_a_batch_whose_last_cell_was_interrupted_still_drops_its_data_set(
    worker_process, make_plan
):
    plan = make_plan(test="oltp_read_only", options={**SLOW_RUN, "time": 15}, threads=[1])
    worker = worker_process()
    batch = batches.batch_launch(plan=plan)
    wait_for_samples(batch, 2)

    assert worker.terminate() == 0  # `make stop` during the last (only) cell
    batch.refresh_from_db()
    assert batch.status == Status.QUEUED and [s["kind"] for s in batch.stages] == ["prepare"]

    worker_process()
    batch = wait_for_batch(batch, timeout=120)

    assert batch.runs.get().status == Status.INTERRUPTED
    assert [s["kind"] for s in batch.stages] == ["prepare", "cleanup"], batch.stages
    assert any("the worker was asked to stop" in w for w in batch.warnings), batch.warnings
