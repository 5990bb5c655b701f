"""A batch's results are built once (runs/services/answers/results.py) and rendered four ways: the
results page, the report to share, the API and the compare page. The report shows the
page's tables (the per-setting peaks, the percentiles, the server counters), and every
rendering carries the same verdict figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from runs.analysis.batch_results import BatchResults
from runs.analysis.summary import summarise
from runs.services import tokens
from runs.services.answers.results import batch_results
from runs.sysbench.parser import parse_text


def section(html: str, start: str, end: str) -> str:
    """The part of the page from `start` to the first `end` after it."""
    begin = html.index(start)
    return html[begin : html.index(end, begin) + len(end)]


def test_the_report_shows_the_peaks_percentiles_and_counters_the_page_shows(client_in, make_batch):
    batch = make_batch(threads=(1, 2, 4), repeats=3, samples=5)

    page = client_in.get(f"/batches/{batch.pk}/results").content.decode()
    report = client_in.get(f"/batches/{batch.pk}/report.html").content.decode()

    peaks = section(page, '<section class="panel" id="findings">', "</section>")
    assert "flush=2</strong>:\n      peaks at <strong>4</strong> threads" in peaks
    assert "still rising at the largest thread count" in peaks
    assert peaks in report
    percentiles = section(page, '<table class="table" id="latency-table">', "</table>")
    assert percentiles.count("<tr>") == 1 + 2  # the header, and each series' run at its peak
    assert percentiles in report
    counters = section(page, '<table class="table" id="counters-table">', "</table>")
    assert counters.count("<tr>") == 1 + 18  # the header, and every run
    assert "0.98" in counters  # log fsyncs per transaction (tests/stored.py)
    assert counters in report


def test_the_report_draws_the_runs_over_time_the_page_draws(client_in, make_batch):
    # issue 56: the report left out the results page's two per-second charts.
    batch = make_batch(threads=(1, 2), repeats=3, samples=20)

    page = client_in.get(f"/batches/{batch.pk}/results")
    report = client_in.get(f"/batches/{batch.pk}/report.html").content.decode()

    for canvas in ('<canvas id="timeseries-chart"', '<canvas id="timeseries-latency-chart"'):
        assert canvas in page.content.decode() and canvas in report
    start = report.index('<script id="report-data" type="application/json">')
    data = json.loads(report[report.index(">", start) + 1 : report.index("</script>", start)])
    shown = page.context["chart"]["timeseries"]
    assert [line["label"] for line in data["timeseries"]] == [line["label"] for line in shown]
    assert len(data["timeseries"]) == 2  # each series' first repeat at its peak
    for line in data["timeseries"]:
        assert len(line["tps"]) == len(line["latency"]) == 20 and line["warmup_s"] == 5


def test_the_page_the_report_and_the_api_render_the_same_results(client_in, make_batch, user):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    token = tokens.token_create(user=user, name="tests", expires_in=None)[1]

    found = batch_results(batch=batch, baseline=1)
    page = client_in.get(f"/batches/{batch.pk}/results?baseline=1").content.decode()
    report = client_in.get(f"/batches/{batch.pk}/report.html?baseline=1").content.decode()
    api = client_in.get(
        f"/api/v1/batches/{batch.pk}/results?baseline=1", HTTP_AUTHORIZATION=f"Token {token}"
    ).json()

    assert found.baseline_label == "flush=2" and len(found.verdicts) == 2
    assert [v["difference"] for v in api["verdicts"]] == [v["difference"] for v in found.verdicts]
    assert [v["ratio"] for v in api["verdicts"]] == [v["ratio"] for v in found.verdicts]
    assert api["summary"] == found.summary and api["baseline"] == found.baseline_label
    page_table = section(page, '<table class="table" id="report-table">', "</table>")
    report_table = section(report, '<table class="table" id="report-verdicts">', "</table>")
    assert _cells(page_table) == _cells(report_table)
    for verdict in found.verdicts:
        assert verdict["difference"] and verdict["difference"] in page_table
    for sentence in found.summary:
        assert sentence in page and sentence in report


def test_a_batchs_cells_are_corrected_together_and_every_rendering_names_it(
    client_in, make_batch, user
):
    # issue 24 item 3: each cell was tested at 95 % alone; now the cells of a batch are one
    # family (Holm), and the page, the report and the API say so with each adjusted p
    batch = make_batch(threads=(1, 2, 4), repeats=3, samples=5)
    token = tokens.token_create(user=user, name="tests", expires_in=None)[1]

    found = batch_results(batch=batch)
    page = client_in.get(f"/batches/{batch.pk}/results").content.decode()
    report = client_in.get(f"/batches/{batch.pk}/report.html").content.decode()
    api = client_in.get(
        f"/api/v1/batches/{batch.pk}/results", HTTP_AUTHORIZATION=f"Token {token}"
    ).json()

    assert len(found.verdicts) == 3  # flush=2 against flush=1 at 1, 2 and 4 threads
    assert found.correction == "Holm's correction over 3 cells"
    for verdict in api["verdicts"]:
        assert verdict["correction"] == found.correction
        assert verdict["p_value"] <= verdict["p_adjusted"] <= min(1.0, 3 * verdict["p_value"])
    assert min(v["p_adjusted"] for v in api["verdicts"]) == pytest.approx(
        min(1.0, 3 * min(v["p_value"] for v in api["verdicts"]))
    )
    named = "(Holm&#x27;s correction over 3 cells: family-wise error 5 %)"
    assert named in page and named in report


def _cells(table: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", table, flags=re.S)


def test_the_results_round_trip_through_json(make_batch):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)

    found = batch_results(batch=batch)

    stored = json.loads(json.dumps(found.to_json()))
    assert BatchResults.from_json(stored) == found
    assert found.percentiles and found.counters and found.table and found.verdicts


def test_runs_asked_for_that_do_not_exist_fall_back_to_the_peaks_percentiles(make_batch):
    batch = make_batch(threads=(1, 2), repeats=1, samples=3)

    found = batch_results(batch=batch, selected=[987654321])

    assert len(found.selected) == 2 and len(found.percentiles) == 2


RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded" / "budget_insert.json"


def record_budgets(batch, *, telemetry: bool) -> None:
    """Give the stored runs the counters (and host summaries) of recorded inserts: flush=1
    the runs of flush=1 sync_binlog=1, flush=2 those of flush=0 sync_binlog=0."""
    recorded = json.loads(RECORDED.read_text())
    like = {"1": ("1", "1"), "2": ("0", "0")}
    for run in batch.runs.all():
        wanted = like[run.settings["innodb_flush_log_at_trx_commit"]]
        source = [r for r in recorded if (r["flush"], r["sync_binlog"]) == wanted][run.round]
        run.summary = {
            **run.summary,
            "tps": source["tps"],
            "latency_avg_ms": source["latency_avg_ms"],
        }
        run.counters = source["counters"]
        run.host_summary = source["host_summary"] if telemetry else {}
        run.save(update_fields=["summary", "counters", "host_summary"])


def test_the_why_panel_shows_each_sides_budget_and_what_moved_everywhere(
    client_in, make_batch, user
):
    batch = make_batch(threads=(1,), repeats=3, samples=5)
    record_budgets(batch, telemetry=True)
    token = tokens.token_create(user=user, name="tests", expires_in=None)[1]

    found = batch_results(batch=batch, baseline=1)
    page = client_in.get(f"/batches/{batch.pk}/results?baseline=1").content.decode()
    report = client_in.get(f"/batches/{batch.pk}/report.html?baseline=1").content.decode()
    api = client_in.get(
        f"/api/v1/batches/{batch.pk}/results?baseline=1", HTTP_AUTHORIZATION=f"Token {token}"
    ).json()

    (pair,) = found.why
    assert pair["moved"].startswith("flush=1 adds 2.0 fsyncs, ")
    assert "server CPU per transaction up" in pair["moved"]
    assert pair["other"]["budget"]["binlog_fsyncs_from"] == "Binlog_group_commits ÷ sync_binlog"
    assert api["why"][0]["moved"] == pair["moved"]
    assert api["why"][0]["other"]["budget"]["fsyncs"] == pair["other"]["budget"]["fsyncs"]
    budget = section(page, '<tr class="why-budget">', "</table>")
    assert pair["moved"] in budget
    assert "server CPU, user µs" in budget and "off-CPU time, µs" in budget
    assert "fsyncs, binary log" in budget
    assert budget in report


def test_without_telemetry_the_budget_says_what_needs_the_server_hosts(client_in, make_batch):
    batch = make_batch(threads=(1,), repeats=3, samples=5)
    record_budgets(batch, telemetry=False)

    page = client_in.get(f"/batches/{batch.pk}/results?baseline=1").content.decode()

    budget = section(page, '<tr class="why-budget">', "</section>")
    assert "server CPU, user µs" not in budget
    assert "fsyncs, log" in budget
    assert (
        "server CPU, off-CPU time, context switches and I/Os per transaction need the server "
        "host&#x27;s telemetry (none was recorded)"
    ) in budget


RECORDED_RATES = RECORDED.parent


def offer_recorded_rates(batch) -> None:
    """Turn a stored batch of 6 runs at 2 threads into a plan of offered rates (an option
    axis `rate`, no search), each run with the summary of a recorded oltp_point_select
    run: 2,000 tps tried 3 times beside a CPU burner, then 24,000, 28,000 and 32,000."""
    recorded = [*((f"noisy/point_rate2000_burst_r{a}", 2000) for a in (1, 2, 3)),
                ("point_rate24000", 24000), ("point_rate28000", 28000),
                ("point_rate32000", 32000)]  # fmt: skip
    batch.params = {**batch.params, "server_settings": {},
                    "option_axes": {"rate": ["2000", "24000", "28000", "32000"]}}  # fmt: skip
    batch.save(update_fields=["params"])
    for run, (name, rate) in zip(batch.runs.order_by("position"), recorded, strict=True):
        output = (RECORDED_RATES / f"{name}.txt").read_text()
        run.summary = summarise(parse_text(output, exit_code=0), warmup_s=0)
        run.settings = run.verified_settings = {}
        run.cell_key = json.dumps(
            {"options": {"rate": str(rate)}, "settings": {}, "threads": 2}, sort_keys=True
        )
        run.save(update_fields=["summary", "settings", "verified_settings", "cell_key"])


def test_a_rate_axis_says_what_it_sustained_on_the_page_the_report_and_the_api(
    client_in, make_batch, user
):
    # issue 24: offered rates without the rate search got no "sustainable up to" on main
    batch = make_batch(threads=(2,), repeats=3, samples=5)
    offer_recorded_rates(batch)
    token = tokens.token_create(user=user, name="tests", expires_in=None)[1]

    found = batch_results(batch=batch)
    page = client_in.get(f"/batches/{batch.pk}/results").content.decode()
    report = client_in.get(f"/batches/{batch.pk}/report.html").content.decode()
    api = client_in.get(
        f"/api/v1/batches/{batch.pk}/results", HTTP_AUTHORIZATION=f"Token {token}"
    ).json()

    (sentence,) = found.summary
    assert sentence.startswith("all runs, 2 threads: sustainable up to 24,000 tps: 24,000 held ")
    assert "; 28,000 failed 1/1 (achieved 22,039 of 28,000 tps); " in sentence
    assert api["summary"] == [sentence]
    summary = section(page, 'id="summary-sentences">', "</ul>")
    assert "sustainable up to 24,000 tps: 24,000 held 1/1" in summary
    assert summary in report
    # no throughput verdicts and no why between offered rates, anywhere
    assert found.verdicts == [] and api["verdicts"] == [] and api["why"] == []
    assert " faster than " not in page and " slower than " not in page
