"""Host metrics where people look: a batch run by a real worker against the private MariaDB
on this machine, then the run in the API (/api/v1/runs/{id} and its /host-metrics), the
batch's results (API, page, report), the exports, the compare page and the run page; and
the plan's quiet-host wait through the API."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from runs.models import Batch, Plan, Status
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SHORT = {"time": 2, "report-interval": 1, "tables": 1, "table-size": 100}


@pytest.fixture
def finished(api, celery_worker, make_plan, owner, target) -> Batch:
    target.created_by = owner
    target.save()
    plan = make_plan(name="machines", options=SHORT, threads=[1], created_by=owner)
    launched = api.post(f"/api/v1/plans/{plan.pk}/launch")
    assert launched.status_code == 201, launched.text
    batch = wait_for_batch(Batch.objects.get(pk=launched.json()["id"]))
    assert batch.status == Status.DONE, batch.error
    return batch


def body(response) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def test_the_api_carries_the_runs_machines(api, finished):
    run_id = finished.runs.get().pk
    run = api.get(f"/api/v1/runs/{run_id}").json()
    assert {h["role"] for h in run["host_summary"]["hosts"]} == {"server", "load"}
    assert run["bottleneck"]["kind"]
    assert run["bottleneck"]["same_machine"] is True

    page = api.get(f"/api/v1/runs/{run_id}/host-metrics").json()
    assert page["run"] == run_id and page["run_status"] == "done"
    roles = {(r["role"], r["host"]) for r in page["results"]}
    assert roles == {("server", "local"), ("load", "local")}
    first = page["results"][0]
    assert set(first) == {"role", "host", "seq", "time_s", "values"}
    assert "cpu" in first["values"] and "disks" in first["values"]

    results = api.get(f"/api/v1/batches/{finished.pk}/results").json()
    (cell,) = results["host_metrics"]
    assert cell["threads"] == 1 and cell["server"]["cpu_us_per_tx"] > 0
    assert cell["bottleneck"] == run["bottleneck"]["kind"]


def test_the_pages_and_exports_show_them(finished, django_user_model):
    browser = Client()
    browser.force_login(django_user_model.objects.create_user("viewer"))
    run = finished.runs.get()

    run_page = browser.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="host-metrics"' in run_page and "js/host_metrics.js" in run_page
    assert "sysbench ran on the database server&#x27;s machine" in run_page

    results_page = browser.get(f"/batches/{finished.pk}/results").content.decode()
    assert "What the machines did, and the bottleneck" in results_page
    assert f"<strong>{run.bottleneck['kind']}</strong>" in results_page

    report = body(browser.get(f"/batches/{finished.pk}/report.html"))
    assert b"host-metrics-table" in report

    compare = browser.get(f"/compare?s=b{finished.pk}&s=r{run.pk}").content.decode()
    assert compare.count("host-metrics-table") == 2

    exported = body(browser.get(f"/batches/{finished.pk}/export.csv"))
    (row,) = csv.DictReader(io.StringIO(exported.decode()))
    assert row["bottleneck"] == run.bottleneck["kind"]
    assert float(row["server_cpu_us_per_tx"]) > 0
    as_json = body(browser.get(f"/batches/{finished.pk}/export.json"))
    assert b'"host_summary"' in as_json and b'"bottleneck"' in as_json


def test_a_plans_quiet_wait_goes_through_the_api(api, make_plan, owner, target):
    target.created_by = owner
    target.save()
    plan = make_plan(name="quiet", options=SHORT, threads=[1], created_by=owner)
    shown = api.get(f"/api/v1/plans/{plan.pk}").json()
    assert shown["quiet_wait_s"] == 0
    changed = api.patch(f"/api/v1/plans/{plan.pk}", json={"quiet_wait_s": 30})
    assert changed.status_code == 200, changed.text
    assert Plan.objects.get(pk=plan.pk).quiet_wait_s == 30
