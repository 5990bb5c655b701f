"""A CPU burner beside one repeat of a cell, live: a private MariaDB, two cells of three
repeats (innodb_flush_log_at_trx_commit 1 and 2, point selects at one thread), and busy
loops, two a core, started by the test just before one repeat of the second cell and
stopped when it ends. That repeat is singled out as disturbed, with
the other processes' share of the CPU, and the verdict of its cell says it rests on it.

Robust on a loaded machine: the burned repeat is judged against its own cell's other
repeats, run minutes apart under the same load, and two busy loops a core beside a
single-threaded client and server slow it twice over or more, past the quarter that
singles a repeat out (runs/analysis/host_metrics/disturbed.py). Two a core, not one: a
client and a server that sleep between their turns are woken ahead of a lone busy loop
on its core (the kernel's scheduler places a task that slept ahead of one that ran), and
on this 2-core virtual machine one loop a core left single-thread point selects as fast
as before (10,500 against 11,500 tps), two a core made them 2 to 9 times slower."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from runs.models import Run, Status
from runs.services import batches
from runs.services.answers.results import batch_results
from tests.helpers import wait_for_batch, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]
OPTIONS = {"time": 4, "report-interval": 1, "tables": 1, "table-size": 1000}
BUSY_LOOP = "while True: pass"


@contextlib.contextmanager
def burner(per_core: int = 2) -> Iterator[None]:
    """Busy loops, two a core, killed on leaving (each in a session of its own)."""
    loops = [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP], start_new_session=True)
        for _ in range(per_core * (os.cpu_count() or 1))
    ]
    try:
        yield
    finally:
        for loop in loops:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(loop.pid, signal.SIGKILL)
            loop.wait()


def finished(run: Run) -> bool:
    run.refresh_from_db()
    return run.status not in {Status.QUEUED, Status.RUNNING}


def test_a_cpu_burner_beside_one_repeat_singles_it_out_and_its_verdict_says_so(
    celery_worker, make_plan
):
    plan = make_plan(
        test="oltp_point_select",
        options=OPTIONS,
        threads=[1],
        server_settings={"innodb_flush_log_at_trx_commit": ["1", "2"]},
        repeats=3,
    )
    batch = batches.batch_launch(plan=plan, launched_by="api")
    runs = list(batch.runs.order_by("position"))
    second_cell = [r for r in runs if r.settings["innodb_flush_log_at_trx_commit"] == "2"]
    burned = second_cell[1]  # its middle repeat
    before = runs[burned.position - 1]
    wait_until(lambda: finished(before), timeout=240, what="the run before the burned one")
    with burner():  # busy before the burned run's sysbench starts, as other processes are
        wait_until(lambda: finished(burned), timeout=240, what="the burned run")

    batch = wait_for_batch(batch)

    assert batch.status == Status.DONE, batch.error
    burned.refresh_from_db()
    others = [r for r in second_cell if r.pk != burned.pk]
    for run in others:
        run.refresh_from_db()
    assert burned.bottleneck["busy_start"].startswith("started on a busy host"), burned.bottleneck
    said = [
        s
        for s in batch_results(batch=batch).summary
        if s.startswith(f"flush=2 at threads=1: run {burned.position + 1} was")
    ]
    assert said, (burned.summary, [r.summary for r in others], batch_results(batch=batch).summary)
    (sentence,) = said
    # the other processes' share, from the run's bottleneck
    assert "while other processes took the CPU" in sentence and "others " in sentence, sentence
    assert "the verdict of flush=2 at threads=1 rests on it" in sentence, sentence


def started(run: Run) -> bool:
    """sysbench of the run has started: its process is recorded (the clock runs)."""
    run.refresh_from_db()
    return run.pgid is not None or run.status not in {Status.QUEUED, Status.RUNNING}


def test_burners_that_start_mid_run_single_it_out_and_are_not_blamed_on_the_client(
    celery_worker, make_plan
):
    """Issue 49: busy loops started 1 s into a repeat, stopped at its end. sysbench's own
    CPU is read each second: the run is not `load_cpu` ("this figure measures the
    client"), the neighbours' share is the rest of the machine beyond the database and
    sysbench, and the repeat is singled out. Before sysbench's CPU was read, others_pct
    was a guess above the quietest second and read 7 % here (every steady second
    burned); from a quiet start the run got load_cpu (issue 49)."""
    plan = make_plan(
        test="oltp_point_select",
        options={**OPTIONS, "time": 6},
        threads=[1],
        server_settings={"innodb_flush_log_at_trx_commit": ["2"]},
        repeats=3,
    )
    batch = batches.batch_launch(plan=plan, launched_by="api")
    runs = list(batch.runs.order_by("position"))
    burned = runs[1]
    wait_until(lambda: started(burned), timeout=240, what="the burned run's sysbench")
    time.sleep(1.0)  # 1 s into the run
    # Four a core: the other repeats run beside whatever else loads this shared machine
    # (a load of 6 to 8 from other tests was seen), and two a core slowed this repeat by
    # less than the quarter that singles it out in one of three tries.
    with burner(per_core=4):
        wait_until(lambda: finished(burned), timeout=240, what="the burned run")

    batch = wait_for_batch(batch)

    assert batch.status == Status.DONE, batch.error
    burned.refresh_from_db()
    limit = burned.bottleneck
    (server,) = [h for h in burned.host_summary["hosts"] if h["role"] == "server"]
    said = f"{limit} others {server.get('others_pct')} sysbench {server.get('sysbench_pct')}"
    for r in runs:
        r.refresh_from_db()
    said += f" tps {[r.summary.get('tps') for r in runs]}"
    # Not the client's: sysbench's own CPU was read, and the burners' share over the run
    # is the machine beyond it and the database (the guess above the quietest second read
    # about none: every steady second was burned). A shared machine may also have been
    # busy before sysbench (busy_start): that is said, not asserted either way.
    assert limit["kind"] != "load_cpu" and not limit["client_bound"], said
    assert server.get("sysbench_pct") is not None and server["others_pct"] >= 25.0, said
    sentences = [
        s for s in batch_results(batch=batch).summary if f": run {burned.position + 1} was" in s
    ]
    assert sentences, (said, batch_results(batch=batch).summary)
    assert "while other processes took the CPU" in sentences[0], sentences
