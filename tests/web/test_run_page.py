"""A finished run's page holds everything sysbench printed: outcome, rates with the
read/write/other split, latency, fairness, errors by code, the histogram or why there is
none, and the raw log (filtered, downloadable; also in the API). Runs stored from real
captured logs by the importer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from runs.models import Run
from runs.services.imports.importer import log_import
from runs.targets.mysql import SPIN_WAITS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"


def imported(name: str) -> Run:
    text = (FIXTURES / f"{name}.txt").read_text()
    run = log_import(log=io.BytesIO(text.encode()), target=None).run
    assert run is not None
    return Run.objects.get(pk=run.pk)


@pytest.mark.django_db
def test_a_forced_shutdown_says_so_with_its_unfinished_transactions(client_in):
    run = imported("oltp_forced_shutdown")

    page = client_in.get(f"/runs/{run.pk}/").content.decode()

    assert "forced shutdown, 2 transactions unfinished" in page
    assert "unfinished transactions on forced shutdown" in page
    assert "17,444 / 4,980 / 2,490" in page  # queries read / write / other
    assert '<td>transactions</td><td class="num">1,243</td><td class="num">620.6</td>' in page
    assert '<td>ignored errors</td><td class="num">2</td><td class="num">1.00</td>' in page
    assert '<td class="num">1.02</td><td class="num">3.21</td><td class="num">7.22</td>' in page
    assert "events per thread 623.0 ± 5.00" in page
    assert "sysbench prints no latency histogram on a forced shutdown" in page
    assert "--histogram=on" not in page
    assert "Number of unfinished transactions on forced shutdown: 2" in page  # the raw log


@pytest.mark.django_db
def test_a_run_with_a_histogram_gets_its_buckets_as_shares(client_in):
    run = imported("oltp_histogram")

    response = client_in.get(f"/runs/{run.pk}/")

    assert 'id="run-histogram-chart"' in response.content.decode()
    buckets = response.context["facts"].histogram
    assert buckets[0] == [0.456, 11, pytest.approx(100 * 11 / 6884, abs=1e-4)]
    assert sum(b[1] for b in buckets) == 6884  # every event of the report, in its bucket
    assert sum(b[2] for b in buckets) == pytest.approx(100, abs=0.01)


@pytest.mark.django_db
def test_a_failed_run_names_its_errors_by_code_with_the_hint(client_in):
    run = imported("err_prepared_statements")

    facts = client_in.get(f"/runs/{run.pk}/").context["facts"]

    assert [(e.code, e.count) for e in facts.errors] == [(1461, 1)]
    assert "max_prepared_stmt_count in the plan's server settings" in facts.errors[0].hint
    assert facts.no_histogram == "The run failed before sysbench printed its final report."


@pytest.mark.django_db
def test_the_raw_log_downloads_whole_and_filters_on_the_server(client_in):
    run = imported("oltp_forced_shutdown")
    text = (FIXTURES / "oltp_forced_shutdown.txt").read_text()

    download = client_in.get(f"/runs/{run.pk}/log")
    found = client_in.get(f"/runs/{run.pk}/log", {"match": "fatal"}).json()

    assert download["Content-Type"] == "text/plain; charset=utf-8"
    assert download["Content-Disposition"] == f'attachment; filename="run-{run.pk}.log"'
    assert download.content.decode().splitlines() == text.splitlines()
    line = text.splitlines().index("FATAL: The --max-time limit has expired, forcing shutdown...")
    assert found == {
        "lines": [[line + 1, "FATAL: The --max-time limit has expired, forcing shutdown..."]],
        "total": len(text.splitlines()),
        "complete": True,
    }


@pytest.mark.django_db
def test_a_long_log_shows_its_tail_first(client_in, monkeypatch):
    monkeypatch.setattr("runs.web.views.batches.RUN_PAGE_LOG_LINES", 5)
    run = imported("oltp_forced_shutdown")
    lines = (FIXTURES / "oltp_forced_shutdown.txt").read_text().splitlines()

    context = client_in.get(f"/runs/{run.pk}/").context

    assert context["log_lines"] == lines[-5:]
    assert context["log_first"] == len(lines) - 4
    assert not context["log"].complete


@pytest.mark.django_db
def test_the_counters_this_server_does_not_report_are_named(client_in, make_batch):
    batch = make_batch(threads=(1,), repeats=1, samples=3)
    run = batch.runs.first()
    run.counters = {**run.counters, "missing": ["Innodb_rows_read", SPIN_WAITS]}
    run.outcome = "ok"
    run.save(update_fields=["counters", "outcome"])

    pages = [client_in.get(f"/runs/{run.pk}/"), client_in.get(f"/batches/{batch.pk}/results")]

    for page in pages:
        assert f"Innodb_rows_read, {SPIN_WAITS}." in page.content.decode()


@pytest.mark.django_db
def test_the_server_hosts_sync_probe_is_on_the_run_page_or_why_not(client_in):
    from runs.analysis.host_metrics.sync_probe import probe_summary
    from tests.analysis.host_metrics.test_sync_probe import TWO_SYNC_LINES

    run = imported("oltp_histogram")
    probe = probe_summary(TWO_SYNC_LINES, offset=0.0, start=805.3, end=807.2, every_s=0.2)
    server = {"role": "server", "host": "db-1", "run_s": 10, "seconds": 10, "coverage": 1.0}
    run.host_summary = {"hosts": [{**server, "sync_probe": probe}], "missing": []}
    run.save(update_fields=["host_summary"])

    page = client_in.get(f"/runs/{run.pk}/").content.decode()

    assert "Sync probe on db-1: <strong>0.103 ms</strong> per fsync" in page
    assert "after a pause, <strong>0.026 ms</strong> at once after another" in page
    assert "medians of 11 samples" in page and "direct writes of 4096 bytes" in page

    run.host_summary = {"hosts": [{**server, "sync_probe": {"problem": "no python3 on db-1"}}]}
    run.save(update_fields=["host_summary"])
    page = client_in.get(f"/runs/{run.pk}/").content.decode()
    assert "No sync probe on db-1: no python3 on db-1" in page


@pytest.mark.django_db
def test_the_run_page_shows_its_environment_as_the_results_page_and_the_api(client_in, make_batch):
    # issue 56: the run page showed no server variables, governor or NIC, though the results
    # page and the API did (and docs/api.md said the run's page showed them).
    batch = make_batch(threads=(1,), repeats=1, samples=3)
    facts = {"cpu_governor": "performance (all 2 CPUs)",
             "network": "eth0 up 10000 Mb/s driver ixgbe, 8 queues"}  # fmt: skip
    batch.environment = {
        **batch.environment,
        "load_host": {**batch.environment["load_host"], **facts},
        "server_host": {"host": "db-1", "kernel": "Linux 6.1.0-26-amd64", **facts},
    }
    batch.save(update_fields=["environment"])
    run = batch.runs.get(settings__innodb_flush_log_at_trx_commit="2")
    run.environment = {"server": {"variables": {"innodb_flush_log_at_trx_commit": "2"}}}
    run.save(update_fields=["environment"])

    response = client_in.get(f"/runs/{run.pk}/")
    page = response.content.decode()
    detail = client_in.get(f"/api/v1/runs/{run.pk}").json()["environment"]

    section = page[page.index('<section id="run-environment">') :]
    assert "Server 10.11.6-MariaDB-log" in section
    for value in (*facts.values(), "Linux 6.1.0-26-amd64"):
        assert value in section, value
    assert detail["load_host"]["cpu_governor"] == facts["cpu_governor"]
    # the server variables as this run saw them, the one its settings changed marked
    assert (
        '<tr class="differs"><td class="mono">innodb_flush_log_at_trx_commit</td>'
        '<td class="mono">2</td></tr>'
    ) in section
    assert detail["server"]["variables"]["innodb_flush_log_at_trx_commit"] == "2"
    assert '<tr class=""><td class="mono">version</td><td class="mono">10.11</td></tr>' in section
