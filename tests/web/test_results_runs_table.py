"""Each run's facts (what sysbench printed: outcome, rates with the read/write/other split,
latency min/avg/max and the percentile, errors and reconnects per second, thread
fairness, errors by code, counters per transaction, links to the run page and its raw
log) on the results page, the report and the results API, from runs stored from
recorded sysbench output. The run page: tests/web/test_run_page.py."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.analysis.run_facts import errors_by_code
from runs.models import Batch, Run
from runs.services.answers import stored_results
from runs.services.imports.importer import log_import

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"

pytestmark = pytest.mark.django_db


def imported(name: str) -> Run:
    text = (FIXTURES / f"{name}.txt").read_text()
    run = log_import(log=io.BytesIO(text.encode()), target=None).run
    assert run is not None
    return Run.objects.get(pk=run.pk)


def pages(client_in, batch: Batch) -> dict[str, str]:
    """The results page's and the report's per-run table."""
    found = {}
    for page in (f"/batches/{batch.pk}/results", f"/batches/{batch.pk}/report.html"):
        html = client_in.get(page).content.decode()
        start = html.index('<table class="table" id="runs-facts">')
        found[page] = html[start : html.index("</table>", start)]
    return found


def test_a_forced_shutdown_run_says_so_with_everything_sysbench_printed(client_in):
    run = imported("oltp_forced_shutdown")

    for page, table in pages(client_in, run.batch).items():
        assert (
            '<span class="status warning">forced shutdown, 2 transactions unfinished</span>'
            in table
        ), page
        assert '<td class="num">620.6</td>' in table  # tps
        assert '<td class="num">12,439</td>' in table  # qps
        assert "17,444 / 4,980 / 2,490" in table  # queries read / write / other
        assert "1.02 / 3.21 / 7.22" in table  # latency min / avg / max
        assert "p95 4.18" in table
        assert '<td class="num">1.00</td>' in table  # ignored errors per second
        assert "events 623.0 ± 5.00" in table  # thread fairness
        # The report's links lead to benchdash wherever the file is opened.
        base = settings.BENCHDASH_BASE_URL if page.endswith("report.html") else ""
        assert f'<a href="{base}/runs/{run.pk}/">run page</a>' in table
        assert f'<a href="{base}/runs/{run.pk}/log">raw log</a>' in table


def test_a_completed_run_shows_its_split_latency_and_counters_per_transaction(client_in):
    run = imported("oltp_histogram")  # 6,884 transactions
    Run.objects.filter(pk=run.pk).update(
        counters={"deltas": {"Innodb_rows_read": 192_752.0, "Innodb_data_fsyncs": 700.0}}
    )
    stored_results.batch_results_forget(batch_id=run.batch_id)  # as an edit in the admin

    for page, table in pages(client_in, run.batch).items():
        assert '<span class="status done">completed</span>' in table, page
        assert '<td class="num">3,433</td>' in table  # tps
        assert "96,376 / 0 / 13,768" in table
        assert "0.45 / 0.58 / 9.93" in table
        assert "p95 0.84" in table
        assert '<span class="mono">Innodb_rows_read</span> 28.00' in table
        assert '<span class="mono">Innodb_data_fsyncs</span> 0.10' in table
        assert "unfinished" not in table


def test_a_failed_run_names_its_errors_by_code(client_in):
    run = imported("err_prepared_statements")

    for page, table in pages(client_in, run.batch).items():
        assert '<span class="status error">failed</span>' in table, page
        assert "error 1461 × 1" in table  # noqa: RUF001 (the page's times sign)
        assert "max_prepared_stmt_count in the plan" in table  # the hint, on hover


def test_the_results_api_carries_each_runs_facts_and_its_links(client_in):
    run = imported("oltp_forced_shutdown")

    body = client_in.get(f"/api/v1/batches/{run.batch_id}/results").json()

    [row] = body["runs"]
    assert (row["id"], row["outcome"], row["unfinished_transactions"]) == (
        run.pk,
        "forced_shutdown",
        2,
    )
    assert row["outcome_text"] == "forced shutdown, 2 transactions unfinished"
    assert (row["tps"], row["qps"]) == (620.6, 12439.0)
    assert row["queries"] == {"read": 17444, "write": 4980, "other": 2490, "total": 24914}
    latency = row["latency"]
    assert (latency["min"], latency["avg"], latency["max"]) == (1.02, 3.21, 7.22)
    assert (latency["percentile"], latency["percentile_value"]) == (95, 4.18)
    assert (row["errors_per_s"], row["reconnects_per_s"]) == (1.0, 0.0)
    assert (row["fairness"]["events_avg"], row["fairness"]["events_stddev"]) == (623.0, 5.0)
    assert row["errors"] == []  # the shutdown's FATAL line is the outcome, not an error
    assert row["url"] == f"http://testserver/runs/{run.pk}/"
    log = client_in.get(row["log"].removeprefix("http://testserver"))
    assert log.status_code == 200
    assert "Number of unfinished transactions on forced shutdown: 2" in log.content.decode()


FAILED = ("err_open_files_script", "err_deadlock_midrun", "err_prepared_statements")


def test_the_errors_the_database_picks_from_the_logs_are_counted_as_the_run_page_counts_them(
    client_in, make_batch
):
    batch = make_batch(threads=(1, 2, 4), repeats=1)  # 6 runs
    logs = {}
    for run, name in zip(batch.runs.order_by("position"), FAILED, strict=False):
        logs[run.pk] = (FIXTURES / f"{name}.txt").read_text()
        Run.objects.filter(pk=run.pk).update(raw_log=logs[run.pk])

    body = client_in.get(f"/api/v1/batches/{batch.pk}/results").json()

    counted = {row["id"]: row["errors"] for row in body["runs"]}
    for pk, log in logs.items():
        expected = [
            {"code": e.code, "kind": e.kind, "count": e.count, "message": e.message, "hint": e.hint}
            for e in errors_by_code(log)
        ]
        assert counted[pk] == expected
    assert [len(counted[pk]) for pk in logs] == [1, 1, 1]
    assert counted[next(iter(logs))][0]["count"] == 14  # "(last message repeated 13 times)"
    assert sum(1 for errors in counted.values() if not errors) == 3  # the runs without a log


def test_the_per_run_table_reads_as_many_queries_for_40_runs_as_for_2(client_in, make_batch):
    small, large = make_batch(threads=(1,), repeats=1), make_batch(threads=(1, 2, 4, 8, 16))
    counts = {}
    for batch in (small, large):
        for url in (f"/batches/{batch.pk}/results", f"/api/v1/batches/{batch.pk}/results"):
            with CaptureQueriesContext(connection) as queries:
                response = client_in.get(url)
            assert response.status_code == 200
            counts[batch.runs.count(), url.startswith("/api")] = len(queries)
        table = pages(client_in, batch)[f"/batches/{batch.pk}/results"]
        assert table.count('<tr id="run-facts-') == batch.runs.count()

    assert counts[2, False] == counts[40, False]
    assert counts[2, True] == counts[40, True]


def test_the_batch_page_says_a_forced_shutdown_not_just_done(client_in):
    forced, normal = imported("oltp_forced_shutdown"), imported("oltp_histogram")

    page = client_in.get(f"/batches/{forced.batch_id}/").content.decode()
    progress = client_in.get(f"/batches/{forced.batch_id}/progress").json()
    other = client_in.get(f"/batches/{normal.batch_id}/").content.decode()

    assert (
        f'<td class="status done" data-status-of="{forced.pk}">'
        "done (forced shutdown, 2 unfinished)</td>"
    ) in page
    assert progress["figures"][str(forced.pk)]["status_text"] == (
        "done (forced shutdown, 2 unfinished)"
    )
    assert progress["runs"][str(forced.pk)] == "done"  # the dots keep the status
    assert f'<td class="status done" data-status-of="{normal.pk}">done</td>' in other
