"""Batches that add their own runs until the answer is clear, end to end: a real worker,
sysbench and a private MariaDB with binary logging and performance_schema on.

threads: auto (up to 2) and repeats: auto on a short oltp_insert, flush=0 against
flush=1: a `faster` verdict with its interval; an open-loop rate search on
oltp_point_select: a finite sustainable rate, with sysbench's queue lengths stored."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from runs.analysis.auto import rate as rate_search
from runs.models import Plan, Status, Target
from runs.services import batches
from runs.services.answers.results import batch_results
from tests import servers
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def pfs_server() -> Iterator[servers.PrivateMariaDB]:
    server = servers.PrivateMariaDB(performance_schema=True)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def pfs_target(transactional_db, pfs_server) -> Iterator[Target]:
    name = pfs_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    yield Target.objects.create(
        name="pfs-mariadb", engine="mariadb", host="127.0.0.1", port=pfs_server.port,
        database=name, user=pfs_server.user, password=pfs_server.password,
    )  # fmt: skip
    pfs_server.drop_database(name)


def test_threads_and_repeats_auto_find_flush_0_faster_with_its_interval(
    celery_worker, local_host, pfs_target
):
    plan = Plan.objects.create(
        name="auto knee",
        target=pfs_target,
        load_host=local_host,
        test="oltp_insert",
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 100},
        threads=[1],
        server_settings={"innodb_flush_log_at_trx_commit": ["0", "1"]},
        repeats=1,
        auto={"threads": {"max": 2}, "repeats": {"target_pct": 5, "max": 4}},
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=500)

    assert batch.status == Status.DONE, (
        batch.error, batch.stages, list(batch.runs.values("status", "error", "reason")),
    )  # fmt: skip
    runs = list(batch.runs.order_by("position"))
    first = [r for r in runs if not r.reason]
    extra = [r for r in runs if r.reason]
    assert {(r.threads, r.settings["innodb_flush_log_at_trx_commit"]) for r in first} == {
        (1, "0"), (1, "1"),
    }  # fmt: skip
    assert len(first) == 6  # repeats auto: 3 repeats each, enough for a verdict
    assert {r.threads for r in runs} == {1, 2}  # the search went up to its bound, no further
    for flush in ("0", "1"):
        cells = [r for r in runs if r.settings["innodb_flush_log_at_trx_commit"] == flush]
        for threads in (1, 2):
            n = len([r for r in cells if r.threads == threads])
            assert 3 <= n <= 4, (flush, threads, n)
    assert any(r.reason.startswith("threads search: 2 threads") for r in extra)
    assert all(r.reason.startswith(("threads search:", "repeat 4 of")) for r in extra), [
        r.reason for r in extra
    ]
    assert [r.position for r in runs] == list(range(len(runs)))

    # flush=1 as the baseline (series 1): flush=0 is faster, with its interval
    found = batch_results(batch=batch, baseline=1)
    at_one: Any = next(
        v for v in found.verdicts if v["series_key"] == found.series[0]["key"] and v["threads"] == 1
    )
    assert at_one["verdict"] == "faster", at_one
    assert 1 < at_one["ratio_low"] <= at_one["ratio"] <= at_one["ratio_high"]
    assert at_one["basis"] == "repeats" and at_one["n_base"] >= 3 and at_one["n_other"] >= 3
    sentence = found.summary[0]
    assert (
        sentence.startswith("flush=0 is ")
        and " faster than flush=1 at 1 thread (95 % CI " in sentence
    )
    assert any(line.startswith("flush=0: peak ") for line in found.auto)
    assert any(line.startswith("repeats: ") for line in found.auto)
    print("\n".join(["", *found.summary, *found.auto]))

    # the why panel reads the counters sampled, performance_schema's file timers included
    why = found.why[0]
    assert why["base"]["fsyncs"] is not None and why["other"]["fsyncs"] is not None
    assert why["base"]["fsyncs"] > why["other"]["fsyncs"]  # flush=1 syncs the log at every commit
    assert "model predicts" in why["text"] or "fsync latency was not measured" in why["text"]
    print(why["text"])
    with_timers = [r for r in runs if "pfs_data_file_sync_ps" in r.counters.get("deltas", {})]
    assert with_timers, "performance_schema's file timers are sampled"


def test_a_rate_search_finds_a_finite_sustainable_rate(celery_worker, local_host, pfs_target):
    plan = Plan.objects.create(
        name="auto rate",
        target=pfs_target,
        load_host=local_host,
        test="oltp_point_select",
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 1000},
        threads=[2],
        auto={"rate": {"start": 2000, "max": 2_000_000, "precision_pct": 25}},
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=500)

    runs = list(batch.runs.order_by("position"))
    rates = [int(r.options["rate"]) for r in runs]
    assert rates[0] == 2000 and len(set(rates)) >= 3
    # issue 24: both ends of the bracket are confirmed, 3 tries each
    assert any(r.reason.startswith("rate search: confirm ") for r in runs)
    assert all(r.reason.startswith("rate search: ") for r in runs[1:])
    for run in runs:
        if run.status == Status.DONE:  # the queue lines reached the samples
            # every queue line printed reached its sample (sysbench may leave out the
            # last interval's queue line when the run ends)
            samples = list(run.samples.all())
            merged = [s.queue_length for s in samples if s.queue_length is not None]
            assert len(merged) == run.raw_log.count("queue length:") >= max(1, len(samples) - 1)
            assert run.summary["queue_length_max"] == max(merged)
    found = batch_results(batch=batch)
    (conclusion,) = found.auto
    assert conclusion.startswith("all runs, 2 threads: sustainable up to ")
    assert " failed " in conclusion  # the search found where it stops, with its tally
    best = int(conclusion.split("sustainable up to ")[1].split(" tps")[0].replace(",", ""))
    assert 2000 <= best < max(rates) <= 2_000_000
    assert [p["offered"] for p in found.rate_chart[0]["points"]] == sorted(
        {r for r, run in zip(rates, runs, strict=True) if run.status == Status.DONE}
    )
    assert rate_search.QUEUE_FULL not in batch.error
    print(conclusion)


def _launched_twice(plan: Plan) -> list[Any]:
    found = []
    for _ in range(2):
        batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=500)
        assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
        found.append(batch)
    return found


def test_the_same_rate_search_launched_twice_gives_agreeing_brackets(
    celery_worker, local_host, pfs_target
):
    # issue 24: on main two launches of one rate search answered 937 and 6,500 tps; issue
    # 36: with an SLO, on a loaded machine, 550 and 162 tps; the search now models failure
    # against the rate, so that the host's noise does not set the bracket
    rate_plan = Plan.objects.create(
        name="rate twice", target=pfs_target, load_host=local_host, test="oltp_point_select",
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 1000},
        threads=[1], auto={"rate": {"start": 4000, "max": 2_000_000, "precision_pct": 50,
                                    "slo_p95_ms": 50}},
    )  # fmt: skip
    brackets = []
    for batch in _launched_twice(rate_plan):
        runs = list(batch.runs.all())
        (conclusion,) = batch_results(batch=batch).auto
        held = int(conclusion.split("sustainable up to ")[1].split(" tps")[0].replace(",", ""))
        failed = int(conclusion.split("; ")[1].split(" failed")[0].replace(",", ""))
        assert f"{held:,} held " in conclusion and "estimated chance of failing" in conclusion
        assert failed > held
        brackets.append((held, failed))
        print(f"{len(runs)} runs: {conclusion}")
    (low_a, high_a), (low_b, high_b) = brackets
    if os.getloadavg()[0] <= (os.cpu_count() or 1):
        # the brackets [held, failed] overlap: at most they meet at a borderline rate that
        # held 2/3 in one launch and failed 2/3 in the other
        assert low_a <= high_b and low_b <= high_a, brackets
    else:
        # Beside a loaded suite the host's capacity itself moves between the launches (a
        # CI run: (6,000, 8,000) then (3,000, 4,000) tps, each bracket right for its
        # minute): the gap between the brackets stays within the noise, where main's
        # search answered 937 and 6,500 tps (7x) on a quiet machine.
        gap = max(low_a, low_b) / min(high_a, high_b)
        assert gap <= 2.5, (brackets, os.getloadavg())


def test_the_same_threads_search_launched_twice_gives_agreeing_peaks(
    celery_worker, local_host, pfs_target
):
    # Apart from the rate search's test above, so that a parallel run gives each its own
    # worker: together they were the suite's slowest test (114 s in a CI run).
    threads_plan = Plan.objects.create(
        name="threads twice", target=pfs_target, load_host=local_host, test="oltp_point_select",
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 1000},
        threads=[1], auto={"threads": {"max": 2}},
    )  # fmt: skip
    answers = []
    for batch in _launched_twice(threads_plan):
        (conclusion,) = batch_results(batch=batch).auto
        counts = batch.runs.values_list("threads", flat=True)
        assert list(counts).count(1) >= 3 and list(counts).count(2) >= 3  # peak and neighbour
        print(f"{len(counts)} runs: {conclusion}")
        answers.append(conclusion)
    ranges = [_noise_range(a) for a in answers]
    peaks = [int(a.split(" at ")[1].split(" thread")[0]) for a in answers]
    assert peaks[0] in ranges[1] and peaks[1] in ranges[0], answers


def _noise_range(conclusion: str) -> set[int]:
    """The thread counts of `peak ... at 2 threads (...); within noise of it: 1-2 threads`."""
    peak = int(conclusion.split(" at ")[1].split(" thread")[0])
    if "within noise of it: " not in conclusion:
        return {peak}
    low, high = (
        conclusion.split("within noise of it: ")[1].split(" threads")[0].split("\N{EN DASH}")
    )
    return set(range(int(low), int(high) + 1))
