"""The runs the results read (results_runs): one JSON text from PostgreSQL, each run as
the Run it is, for the fields the results use."""

from __future__ import annotations

from dataclasses import fields
from datetime import timedelta

import pytest
from django.utils import timezone

from runs.models import Batch, Run, Target
from runs.services.answers.results import ResultsRun, results_runs

pytestmark = pytest.mark.django_db

LOG = "Initializing worker threads...\nFATAL: mysql_stmt_execute() returned error 1213\nok\n"


def test_each_run_read_as_json_is_the_run_model_field_for_field():
    target = Target.objects.create(name="db-one", host="127.0.0.1")
    batch = Batch.objects.create(params={}, seed=0, status="done", launched_by="import")
    now = timezone.now()
    final = {"checkpoint_s": None, "sql": {"tps": 12.5, "qps": 250.0}}
    reports = [{"checkpoint_s": 1.0, "sql": {"tps": 1.0}}, {**final, "histogram": [[1, 2]]}]
    Run.objects.create(
        batch=batch, position=1, round=0, cell_key='{"target": 1}', threads=4, status="done",
        target=target, settings={"sync_binlog": "1"}, verified_settings={"sync_binlog": "1"},
        summary={"tps": 12.5, "ratio": 1.0, "name": "é"}, counters={"deltas": {"c": 3}},
        host_summary={"hosts": []}, bottleneck={"kind": "cpu"}, reports=reports,
        raw_log=LOG, started_at=now, finished_at=now + timedelta(seconds=1, microseconds=7),
        outcome="ok", reason="auto: one more repeat", test="oltp_read_write", install="i",
        config="c", error="",
    )  # fmt: skip
    Run.objects.create(batch=batch, position=0, round=1, cell_key="k", threads=1, status="queued")

    found = results_runs(batch)

    assert [r.position for r in found] == [0, 1]
    queued, done = found
    model = Run.objects.get(position=1)
    for field in fields(ResultsRun):
        if field.name not in ("target", "final_report", "error_lines"):
            assert getattr(done, field.name) == getattr(model, field.name), field.name
    assert done.started_at is not None and done.started_at.tzinfo is not None
    assert done.target is not None and done.target.name == "db-one"
    assert done.final_report == {"checkpoint_s": None, "sql": {"tps": 12.5, "qps": 250.0}}
    assert (
        done.error_lines
        == "Initializing worker threads...\nFATAL: mysql_stmt_execute() returned error 1213"
    )
    assert queued.target is None and queued.started_at is None and queued.final_report is None
    assert queued.error_lines == "" and queued.settings == {}
    assert results_runs(Batch.objects.create(params={}, seed=0, status="done")) == []
