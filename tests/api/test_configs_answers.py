"""A configs axis answers per config (issue 47): a batch of three config snippets on a
managed mariadbd of the test's own, run by a real worker, and its results through the API:
one series and one table row per config in the user's order, verdicts and outliers within
a config, the why panel's fsyncs between configs, the runs named by config."""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import Client

from runs.models import Batch, Status
from runs.services import batches
from tests.execution.test_restarts import make_plan, managed_instance, managed_target
from tests.helpers import wait_for_batch
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

RUN = {"time": 2, "report-interval": 1, "tables": 1, "table-size": 100}
# the user's order (b1e1, the safest, the baseline), not the alphabet's
CONFIGS = [
    {"label": "b1e1", "text": "[mysqld]\nsync_binlog = 1\ninnodb_flush_log_at_trx_commit = 1"},
    {"label": "b0e1", "text": "[mysqld]\nsync_binlog = 0\ninnodb_flush_log_at_trx_commit = 1"},
    {"label": "b0e0", "text": "[mysqld]\nsync_binlog = 0\ninnodb_flush_log_at_trx_commit = 0"},
]
LABELS = ["config=b1e1", "config=b0e1", "config=b0e0"]


@pytest.fixture
def managed() -> Iterator[PrivateMariaDB]:
    yield from managed_instance(PrivateMariaDB())


@pytest.fixture
def configs_batch(celery_worker, local_host, managed, owner) -> Batch:
    plan = make_plan(
        managed_target(managed, created_by=owner),
        local_host,
        test="oltp_insert",
        options=RUN,
        repeats=2,
        servers={"configs": CONFIGS, "after_restart": "cold"},
        created_by=owner,
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    return batch


def test_a_configs_axis_answers_per_config(api, configs_batch, owner):
    results = api.get(f"/api/v1/batches/{configs_batch.pk}/results").json()

    # main pooled the six runs into one series "all runs", one row of n=6
    assert results["series"] == LABELS
    assert [(r["series"]["label"], r["point"]["n"]) for r in results["table"]] == [
        (label, 2) for label in LABELS
    ]
    assert results["baseline"] == "config=b1e1"
    assert {v["series"] for v in results["verdicts"]} == set(LABELS[1:])
    # main set b0e1 and b0e0 against b1e1 alone; b0e0 against b0e1 is judged too
    assert [v["name"] for v in results["verdicts"]] == [
        "config=b0e1 against config=b1e1",
        "config=b0e0 against config=b1e1",
        "config=b0e0 against config=b0e1",
    ]
    assert results["summary"][2].startswith("config=b0e0 against config=b0e1 at 1 thread")
    assert results["summary"][0].startswith("config=b0e1 against config=b1e1 at 1 thread")
    named = [r["label"] for r in results["runs"]]
    assert sorted(named) == sorted(f"threads=1 {label}" for label in LABELS for _ in (1, 2))
    # a slow repeat is only ever set against its own config's other repeat
    for said in results["summary"]:
        if "other repeats" in said:
            assert said.startswith(tuple(LABELS)), said

    why = {w["other"]["label"]: w for w in results["why"]}
    b0e0 = why["config=b0e0"]
    assert b0e0["base"]["label"] == "config=b1e1"
    assert b0e0["base"]["log_fsyncs"] > 0.5 and b0e0["other"]["log_fsyncs"] < 0.1, b0e0
    assert b0e0["moved"].startswith("config=b0e0 removes "), b0e0["moved"]
    assert " fsync" in b0e0["moved"].split(";")[0]
    # about one a transaction under b1e1: 0.99 in one whole run, 1.00 alone (a background
    # flush may serve two commits); about none under b0e0 (0.01 in a whole run: the log's
    # once-a-second flush)
    fsyncs = r"config=b0e0 makes 0\.0\d redo log fsyncs per transaction against (0\.9\d|1\.0\d)"
    assert re.match(fsyncs, b0e0["fsyncs_moved"]), b0e0["fsyncs_moved"]
    exports_name_each_runs_config(api, configs_batch, owner)  # one batch: they cost minutes


def exports_name_each_runs_config(api, configs_batch, owner):
    """The runs' CSV and JSON exports and the results page's TSV of the same batch."""
    client = Client()
    client.force_login(owner)
    cookies = {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}
    number = configs_batch.pk

    runs_csv = api.get(f"/batches/{number}/export.csv?what=runs", cookies=cookies)
    runs_json = api.get(f"/batches/{number}/export.json", cookies=cookies).json()
    page = api.get(f"/batches/{number}/results", cookies=cookies).text

    assert runs_csv.status_code == 200, runs_csv.text[:300]
    rows = list(csv.DictReader(io.StringIO(runs_csv.text)))
    assert {"test", "install", "config"} <= set(rows[0]), list(rows[0])
    ran = sorted((r["test"], r["install"], r["config"]) for r in rows)
    assert ran == sorted(("oltp_insert", "", c["label"]) for c in CONFIGS for _ in (1, 2))
    named = sorted(r["config"] for r in runs_json["runs"])
    assert named == sorted(c["label"] for c in CONFIGS for _ in (1, 2))
    # the results page's "Copy as TSV": one row a config, named by it, in the user's order
    textarea = re.search(r'<textarea id="table-tsv"[^>]*>(.*?)</textarea>', page, re.S)
    assert textarea is not None, page[:2000]
    tsv = html.unescape(textarea[1])
    assert [line.split("\t")[1] for line in tsv.splitlines()[1:]] == LABELS
    # "What this batch says" names the pair it adds beside the baseline's verdicts
    assert '<span class="results-paired">config=b0e0 against config=b0e1</span>' in page


def test_the_verdicts_schema_names_a_cells_identity(api):
    schema = api.get("/api/v1/schema/?format=json").json()

    said = schema["components"]["schemas"]["Verdict"]["properties"]["series"]["description"]
    named = ["test", "target", "install", "config", "settings", "option", "threads"]
    assert all(word in said for word in named), said
    assert [said.index(word) for word in named[:4]] == sorted(said.index(w) for w in named[:4])
