"""Batches and runs stored as a worker leaves them, without running sysbench: for the
pages, the exports and the API that read them (the make_batch fixture, tests/conftest.py)."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from typing import Any

from django.utils import timezone

from runs.models import Batch, CounterSample, Plan, Run, Sample

SERVER = {
    "version": "10.11.6-MariaDB-log",
    "variables": {"innodb_flush_log_at_trx_commit": "1", "version": "10.11"},
}
HISTOGRAM = [[1.0, 50], [2.0, 40], [5.0, 9], [50.0, 1]]
COUNTERS = {
    "deltas": {"Innodb_data_fsyncs": 10.0},
    "derived": {"rows_read_per_query": 1.5, "log_fsyncs_per_transaction": 0.98},
}


def stored_run(batch, position, round_, threads, flush, samples, start):
    tps = 100.0 * threads * (2 if flush == "2" else 1) + round_
    settings = {"innodb_flush_log_at_trx_commit": flush}
    began = start + timedelta(seconds=position * (samples + 5))
    return Run(
        batch=batch,
        position=position,
        round=round_,
        cell_key=json.dumps(
            {"options": {}, "settings": settings, "threads": threads}, sort_keys=True
        ),
        threads=threads,
        settings=settings,
        verified_settings=settings,
        status="done",
        summary={
            "tps": tps,
            "qps": tps * 20,
            "latency_pct": 95,
            "latency_pct_ms": 10.0 / (1 + round_),
            "errors": 0,
        },
        histogram=HISTOGRAM,
        counters=COUNTERS,
        started_at=began,
        finished_at=began + timedelta(seconds=samples),
    )


def bare_batch(plan: Plan, **fields: Any) -> Batch:
    """A batch row as a launch leaves it, without a worker to run it."""
    values: dict[str, Any] = {
        "plan": plan,
        "target": plan.target,
        "load_host": plan.load_host,
        "params": {},
        "seed": 1,
        "launched_by": "api",
    }
    return Batch.objects.create(**(values | fields))


def finished_batch(plan, threads, repeats, samples, spike_at):
    """A finished batch of stored runs: `threads` x flush 1/2 x `repeats`, each run with
    `samples` interval samples, a histogram and counters."""
    start = timezone.now() - timedelta(hours=2)
    params = {
        "test": plan.test,
        "options": plan.options,
        "warmup_s": 5,
        "repeats": repeats,
        "server_settings": plan.server_settings,
        "order_policy": "interleaved",
        "dataset_policy": "fresh",
    }
    batch = Batch.objects.create(
        plan=plan,
        target=plan.target,
        load_host=plan.load_host,
        params=params,
        seed=1,
        status="done",
        launched_by="ui",
        started_at=start,
        finished_at=timezone.now(),
        environment={"server": SERVER, "load_host": {"host": "local", "cpu_cores": 2}},
    )
    cells = [(r, f, t) for r in range(repeats) for f in ("1", "2") for t in threads]
    runs = [
        stored_run(batch, position, r, t, f, samples, start)
        for position, (r, f, t) in enumerate(cells)
    ]
    Run.objects.bulk_create(runs)
    now = timezone.now()
    rows = []
    for run in runs:
        for seq in range(1, samples + 1):
            tps = run.summary["tps"] * (1 + 0.05 * math.sin(seq))
            if spike_at == seq and run.position == 0:
                tps = 99_999.0
            rows.append(
                Sample(
                    run=run,
                    seq=seq,
                    time_s=float(seq),
                    threads=run.threads,
                    tps=tps,
                    qps=tps * 20,
                    latency_pct=95,
                    latency_ms=5.0,
                    in_warmup=seq <= 5,
                    received_at=now,
                )
            )
    Sample.objects.bulk_create(rows, batch_size=5000)
    CounterSample.objects.bulk_create(
        CounterSample(run=run, seq=i, time_s=float(i), values={"Innodb_data_fsyncs": 10.0 * i})
        for run in runs[:4]
        for i in range(1, 6)
    )
    return batch
