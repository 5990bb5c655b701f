"""The sample sink's writes: a heartbeat's worth in one statement, a burst by COPY; both
can be repeated (a write whose answer was lost with the database, or samples the sweeper
already stored from Redis, are skipped, not doubled)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from runs.execution.host_metrics import HostRow
from runs.execution.stream.sample_writes import (
    STATEMENT_ROWS,
    LiveSample,
    counters_copy,
    host_metrics_copy,
    run_write,
    samples_copy,
)
from runs.execution.stream.sink import SampleSink
from runs.models import Batch, Run
from runs.sysbench.parser import OutputParser

pytestmark = pytest.mark.django_db

CAPTURED = Path(__file__).parents[1] / "fixtures" / "sysbench" / "oltp_read_write.txt"
INTERVAL_PREFIX = re.compile(r"^\[ \d+s \] ")


def captured_interval_lines(count: int) -> list[str]:
    """Real interval lines of a captured run, renumbered 1s, 2s, ... as many as asked."""
    real = [line for line in CAPTURED.read_text().splitlines() if INTERVAL_PREFIX.match(line)]
    return [INTERVAL_PREFIX.sub(f"[ {i + 1}s ] ", real[i % len(real)]) for i in range(count)]


def live_sample(run: Run, seq: int, tps: float) -> LiveSample:
    return LiveSample(
        run_id=run.pk, seq=seq, time_s=float(seq), threads=2, tps=tps, qps=tps * 20,
        reads=tps * 14, writes=tps * 4, other=tps * 2, latency_pct=95.0, latency_ms=3.1,
        errors_per_s=0.0, reconnects_per_s=0.0, in_warmup=False,
        extra={"read_mib_per_s": 1.5} if seq == 2 else {}, received_at=timezone.now(),
    )  # fmt: skip


@pytest.fixture
def run() -> Run:
    batch = Batch.objects.create(label="sink", params={}, seed=0, launched_by="cli")
    return Run.objects.create(batch=batch, position=0, round=0, cell_key="c", threads=2)


def test_samples_already_stored_are_skipped_and_the_new_ones_stored(run):
    first = [live_sample(run, seq, 100.0 + seq) for seq in (1, 2, 3)]
    with transaction.atomic():
        samples_copy(first)

    # Written again with one more: as after a lost answer, in the same transaction too.
    with transaction.atomic():
        samples_copy([*first, live_sample(run, 4, 104.0)])
        samples_copy([live_sample(run, 4, 999.0)])

    stored = list(run.samples.order_by("seq").values_list("seq", "tps", "extra"))
    assert stored == [
        (1, 101.0, {}),
        (2, 102.0, {"read_mib_per_s": 1.5}),
        (3, 103.0, {}),
        (4, 104.0, {}),
    ]


def test_counter_readings_already_stored_are_skipped(run):
    readings = [(1, 1.0, {"Questions": 10.0}), (2, 2.0, {"Questions": 25.0})]
    with transaction.atomic():
        counters_copy(run.pk, readings)
    with transaction.atomic():
        counters_copy(run.pk, [*readings, (3, 3.0, {"Questions": 41.5})])

    stored = list(run.counter_samples.order_by("seq").values_list("seq", "time_s", "values"))
    assert stored == [
        (1, 1.0, {"Questions": 10.0}),
        (2, 2.0, {"Questions": 25.0}),
        (3, 3.0, {"Questions": 41.5}),
    ]


def test_a_heartbeat_write_stores_everything_in_one_statement_and_can_be_repeated(run):
    samples = [live_sample(run, seq, 100.0 + seq) for seq in (1, 2)]
    readings = [(1, 1.0, {"Questions": 10.0}), (2, 2.0, {"Questions": 25.0})]
    with CaptureQueriesContext(connection) as queries:
        cancelled = run_write(run, samples=samples, counters=readings, log=(0, "one\ntwo\n"))
    assert len(queries) == 1 and cancelled is False

    # The answer was lost: the same write again, then the next one.
    run_write(run, samples=samples, counters=readings, log=(0, "one\ntwo\n"))
    third = live_sample(run, 3, 103.0)
    run_write(run, samples=[third], counters=[(3, 3.0, {"Questions": 41.5})], log=(8, "three\n"))

    run.refresh_from_db()
    assert run.raw_log == "one\ntwo\nthree\n"
    assert run.heartbeat_at is not None
    assert list(run.samples.order_by("seq").values_list("seq", "tps", "extra", "in_warmup")) == [
        (1, 101.0, {}, False),
        (2, 102.0, {"read_mib_per_s": 1.5}, False),
        (3, 103.0, {}, False),
    ]
    assert run.samples.get(seq=3).received_at == third.received_at
    assert list(run.counter_samples.order_by("seq").values_list("seq", "values")) == [
        (1, {"Questions": 10.0}),
        (2, {"Questions": 25.0}),
        (3, {"Questions": 41.5}),
    ]


def test_a_sample_stored_before_its_queue_line_gets_the_queue_figures(run):
    sample = live_sample(run, 1, 100.0)
    run_write(run, samples=[sample], counters=[], log=(0, ""))
    sample.queue_length, sample.concurrency = 7, 2
    run_write(run, samples=[sample], counters=[], log=(0, ""))
    # Written again without them (a lost answer): what is stored stays.
    run_write(run, samples=[live_sample(run, 1, 100.0)], counters=[], log=(0, ""))

    assert run.samples.values_list("queue_length", "concurrency").get() == (7, 2)


def test_the_write_tells_whether_the_batch_was_cancelled(run):
    assert run_write(run, samples=[], counters=[], log=(0, "")) is False
    Batch.objects.filter(pk=run.batch_id).update(cancel_requested_at=timezone.now())
    assert run_write(run, samples=[], counters=[], log=(0, "")) is True
    run.batch.refresh_from_db()
    assert run.batch.heartbeat_at is not None


def test_a_burst_goes_by_copy_and_a_later_queue_line_still_reaches_its_sample(run, settings):
    settings.BENCHDASH_HEARTBEAT_SECONDS = 3600
    sink = SampleSink(run, warmup_s=0)
    parser = OutputParser()
    count = STATEMENT_ROWS + 10
    for line in captured_interval_lines(count):
        sink.add_line(line)
        for event in parser.feed(line):
            sink.add(event)
    assert sink.flush() is False
    line = f"[ {count}s ] queue length: 3, concurrency: 2"
    sink.add_line(line)
    for event in parser.feed(line):
        sink.add(event)
    sink.flush(final=True)

    run.refresh_from_db()
    assert run.samples.count() == count
    assert run.samples.get(seq=count).queue_length == 3
    assert run.raw_log.count("\n") == count + 1


def host_rows(seqs: range, role: str = "server", host: str = "db-host") -> list[HostRow]:
    values = {"cpu": {"user": 10.0, "system": 5.0, "iowait": 0.0, "steal": 0.0, "idle": 85.0}}
    return [HostRow(role, host, seq, float(seq), values) for seq in seqs]


def test_host_metrics_ride_in_the_heartbeat_statement_and_can_be_repeated(run):
    rows = [*host_rows(range(1, 3)), *host_rows(range(1, 3), role="load", host="lh")]
    with CaptureQueriesContext(connection) as queries:
        run_write(run, samples=[], counters=[], log=(0, ""), hosts=rows)
    assert len(queries) == 1
    run_write(run, samples=[], counters=[], log=(0, ""), hosts=[*rows, *host_rows(range(3, 4))])

    stored = list(run.host_metrics.order_by("role", "seq").values_list("role", "host", "seq"))
    assert stored == [
        ("load", "lh", 1),
        ("load", "lh", 2),
        ("server", "db-host", 1),
        ("server", "db-host", 2),
        ("server", "db-host", 3),
    ]
    assert run.host_metrics.get(role="server", seq=1).values["cpu"]["user"] == 10.0


def test_a_burst_of_host_metrics_goes_by_copy_and_skips_what_is_stored(run, settings):
    settings.BENCHDASH_HEARTBEAT_SECONDS = 3600
    with transaction.atomic():
        host_metrics_copy(run.pk, host_rows(range(1, 11)))
    sink = SampleSink(run, warmup_s=0)
    sink.add_host_rows(host_rows(range(1, STATEMENT_ROWS + 20)))
    sink.flush(final=True)

    assert run.host_metrics.count() == STATEMENT_ROWS + 19
