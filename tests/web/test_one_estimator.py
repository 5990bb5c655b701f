"""Issue 36: every cell's figures agree across the four renderings of a batch's results: the
results page, the report, the API and the runs' CSV. The throughput column, its ratio and
the verdict read one estimator (the geometric mean of the repeats), the latency column is
labelled with the percentile the plan asked for, and the why row's time per transaction is
the budget's. Recorded batches: stored runs with a warmup and 3 repeats, given percentile
99 and the counters of recorded inserts (a why pair); and a rate axis of recorded runs."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics

import pytest

from runs.analysis.results import RunFigures
from runs.services import tokens
from runs.services.answers.results import batch_results
from runs.web.templatetags.benchdash import num, ratio
from tests.web.test_results_everywhere import offer_recorded_rates, record_budgets, section


def as_p99(batch) -> None:
    """The plan asked for --percentile=99: each run's latency figure is its p99."""
    batch.params = {**batch.params, "options": {**batch.params["options"], "percentile": 99}}
    batch.save(update_fields=["params"])
    for run in batch.runs.all():
        p99 = 20.0 + run.position * 1.5
        run.summary = {**run.summary, "latency_pct": 99, "latency_pct_ms": p99}
        run.save(update_fields=["summary"])


def rendered(client_in, batch, user):
    token = tokens.token_create(user=user, name="tests", expires_in=None)[1]
    page = client_in.get(f"/batches/{batch.pk}/results").content.decode()
    report = client_in.get(f"/batches/{batch.pk}/report.html").content.decode()
    api = client_in.get(
        f"/api/v1/batches/{batch.pk}/results", HTTP_AUTHORIZATION=f"Token {token}"
    ).json()
    answer = client_in.get(f"/batches/{batch.pk}/export.csv?what=runs")
    rows = list(csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())))
    return page, report, api, rows


def table_rows(html: str, table_id: str) -> dict[str, list[str]]:
    """The table's cells by row (its setting label and threads), the threads cell apart."""
    table = section(html, f'<table class="table" id="{table_id}">', "</table>")
    found, threads = {}, ""
    for row in re.findall(r"<tr class=\"[^\"]*\">(.*?)</tr>", table, flags=re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        if "rowspan" in row.split("</td>")[0]:
            threads = re.sub(r"<[^>]+>", "", cells.pop(0))
        label = re.sub(r"<[^>]+>", "", cells[0]).strip()
        found[f"{label}@{threads}"] = [re.sub(r"<[^>]+>", "", c).strip() for c in cells]
    return found


def csv_cells(batch, rows) -> dict[tuple[str, int], dict[str, float]]:
    """Each cell's throughput and latency (geometric means) from the CSV's runs."""
    key_of = {r.pk: RunFigures.of(r).series_key for r in batch.runs.all()}
    cells: dict[tuple[str, int], list[dict[str, str]]] = {}
    for row in rows:
        if row["status"] == "done":
            cells.setdefault((key_of[int(row["id"])], int(row["threads"])), []).append(row)
    return {
        place: {
            "mean": math.exp(statistics.fmean(math.log(float(r["tps"])) for r in members)),
            "latency": statistics.geometric_mean(float(r["latency_pct_ms"]) for r in members),
            "pct": {float(r["latency_pct"]) for r in members}.pop(),
        }
        for place, members in cells.items()
    }


def assert_every_cell_agrees(batch, page, report, api, rows, *, pct: str) -> None:
    page_rows = table_rows(page, "report-table")
    report_rows = table_rows(report, "report-verdicts")
    assert page_rows == report_rows and len(page_rows) == len(api["table"])
    from_csv = csv_cells(batch, rows)
    assert api["estimator"] == "geometric mean of the repeats" and api["latency_label"] == pct
    for html in (page, report):
        assert f'<th class="num">{pct} ms</th>' in html
        assert "geometric mean of the repeats" in html
    for cell in api["table"]:
        point = cell["point"]
        figures = from_csv[(cell["series"]["key"], cell["threads"])]
        assert point["mean"] == pytest.approx(figures["mean"])  # API = CSV
        assert point["latency_ms"] == pytest.approx(figures["latency"])
        assert figures["pct"] == float(pct[1:])
        shown = page_rows[f"{cell['series']['label']}@{cell['threads']}"]
        assert shown[1] == num(point["mean"])  # page = report = API
        assert shown[4] == num(point["latency_ms"])
        if not cell["is_baseline"]:
            assert shown[6] == ratio(cell["ratio"])
            if cell["verdict"]:
                assert cell["verdict"]["ratio"] == pytest.approx(cell["ratio"])
                base = next(c for c in api["table"] if c["is_baseline"]
                            and c["threads"] == cell["threads"])  # fmt: skip
                assert cell["ratio"] == pytest.approx(point["mean"] / base["point"]["mean"])
    tsv = api_tsv = batch_results(batch=batch).table_tsv.splitlines()
    assert tsv[0].split("\t")[4] == f"{pct} ms" and api_tsv


def test_a_p99_batch_with_a_why_pair_agrees_on_every_cell_across_four_renderings(
    client_in, make_batch, user
):
    batch = make_batch(threads=(1,), repeats=3, samples=8)  # warmup 5 s, 3 repeats
    record_budgets(batch, telemetry=True)
    as_p99(batch)

    page, report, api, rows = rendered(client_in, batch, user)

    assert_every_cell_agrees(batch, page, report, api, rows, pct="p99")
    assert "p95 ms" not in section(page, '<table class="table" id="report-table">', "</table>")
    live = client_in.get(f"/batches/{batch.pk}/").content.decode()  # its runs table too
    assert '<th class="num">p99 ms</th>' in section(live, 'id="runs-table"', "</table>")
    # The live charts' latency series too, on the batch page and a run's page.
    assert 'id="live-chart" data-latency-label="p99"' in live
    run_page = client_in.get(f"/runs/{batch.runs.first().pk}/").content.decode()
    assert 'id="run-chart" data-latency-label="p99"' in run_page
    assert "p95" not in section(live, 'id="current-run"', "</section>")
    (pair,) = api["why"]
    for side in ("base", "other"):  # one source for the time per transaction
        assert pair[side]["time_ms"] * 1000 == pytest.approx(pair[side]["budget"]["time_us"])
        assert f"{pair[side]['time_ms']:.3f}" in section(page, 'id="why-table"', "</table>")
    why = section(page, '<table class="table" id="why-table">', "</table>")
    assert why in report


def test_a_rate_axis_batch_agrees_on_every_cell_across_four_renderings(client_in, make_batch, user):
    batch = make_batch(threads=(2,), repeats=3, samples=5)
    offer_recorded_rates(batch)

    page, report, api, rows = rendered(client_in, batch, user)

    assert_every_cell_agrees(batch, page, report, api, rows, pct="p95")
    assert json.dumps(api["summary"]).count("sustainable up to") == 1
