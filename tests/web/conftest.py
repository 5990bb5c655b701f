"""Fixtures of the page tests: named users, a logged-in client, and batches made of
stored rows (no worker needed to read a page)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from runs.models import Batch, CounterSample, LoadHost, Plan, Run, Sample, Target


@pytest.fixture
def user(db, django_user_model):
    return django_user_model.objects.create_user("ana", password="ana-pass-123")


@pytest.fixture
def client_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def stored_target(db, user) -> Target:
    """A target of ana's (the logged-in user of `client_in`)."""
    return Target.objects.create(
        name="db-1", engine="mariadb", host="127.0.0.1", port=3999, database="sbtest",
        user="bench", password="s3cret-target-pw", cpu_cores=4, disk_count=2, created_by=user,
    )  # fmt: skip


@pytest.fixture
def stored_plan(db, stored_target, user) -> Plan:
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    return Plan.objects.create(
        name="insert scaling",
        target=stored_target,
        load_host=local,
        test="oltp_insert",
        options={"time": 2, "report-interval": 1, "tables": 1, "table-size": 100},
        threads=[1, 2],
        server_settings={"innodb_flush_log_at_trx_commit": ["1", "2"]},
        dataset_policy="fresh",
        created_by=user,
    )


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


@pytest.fixture
def make_batch(db, stored_plan) -> Callable[..., Batch]:
    """A finished batch of stored runs: `threads` x flush 1/2 x `repeats`, each run with
    `samples` interval samples, a histogram and counters."""

    def make(threads=(1, 2, 4, 8, 16), repeats=4, samples=120, spike_at=None, plan=None):
        plan = plan or stored_plan
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

    return make
