"""A forced shutdown (`--time` with `--forced-shutdown`: a valid result with unfinished
transactions) is said everywhere a run's result is: the import preview, the results
table, the report, the CSV and JSON exports. The run page: tests/web/test_run_page.py."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from runs.models import Batch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"
FORCED = (FIXTURES / "oltp_forced_shutdown.txt").read_text()

pytestmark = pytest.mark.django_db


def saved(client_in) -> Batch:
    client_in.post("/import", {"text": FORCED, "action": "save", "label": "forced"})
    return Batch.objects.get()


def test_the_import_preview_says_forced_shutdown_not_done(client_in):
    html = client_in.post("/import", {"text": FORCED, "action": "preview"}).content.decode()

    outcome = "forced shutdown, 2 transactions unfinished"
    assert f'<dd id="import-outcome" class="status warning">{outcome}</dd>' in html
    assert "1.02 / 3.21 / 7.22 ms" in html  # latency min / avg / max
    # issue 25: the preview holds what the run page will (tests/web/test_run_page.py)
    assert "17,444 / 4,980 / 2,490" in html  # queries read / write / other
    assert '<td>ignored errors</td><td class="num">2</td><td class="num">1.00</td>' in html
    assert "events per thread 623.0 ± 5.00" in html  # thread fairness
    assert "unfinished transactions on forced shutdown" in html
    assert "sysbench prints no latency histogram on a forced shutdown" in html


def test_the_results_table_and_the_report_say_it(client_in):
    batch = saved(client_in)

    for page in (f"/batches/{batch.pk}/results", f"/batches/{batch.pk}/report.html"):
        html = client_in.get(page).content.decode()
        assert "1 forced shutdown, 2 unfinished" in html, page


def test_the_exports_hold_the_outcome_min_latency_and_the_query_split(client_in):
    batch = saved(client_in)

    rows = list(csv.DictReader(io.StringIO(
        b"".join(client_in.get(f"/batches/{batch.pk}/export.csv?what=runs").streaming_content).decode()
    )))  # fmt: skip
    document = json.loads(
        b"".join(client_in.get(f"/batches/{batch.pk}/export.json").streaming_content)
    )

    assert len(rows) == 1
    assert rows[0]["outcome"] == "forced_shutdown"
    assert rows[0]["unfinished_transactions"] == "2"
    assert (rows[0]["latency_min_ms"], rows[0]["latency_avg_ms"]) == ("1.02", "3.21")
    assert (rows[0]["queries_read"], rows[0]["queries_write"]) == ("17444.0", "4980.0")
    assert rows[0]["events_per_thread_stddev"] == "5.0"
    run = document["runs"][0]
    assert run["outcome"] == "forced_shutdown"
    assert run["summary"]["unfinished_transactions"] == 2
    assert run["reports"][0]["sql"]["read"] == 17444


def test_the_results_latency_section_says_why_there_is_no_histogram(client_in):
    batch = saved(client_in)

    html = client_in.get(f"/batches/{batch.pk}/results").content.decode()

    assert "sysbench prints no latency histogram on a forced shutdown" in html
    assert "--histogram=on" not in html
