"""The results pages read a bounded number of queries and carry a bounded number of chart
points whatever the batch's size, and keep the peaks of long series."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.models import Max
from django.test.utils import CaptureQueriesContext

from runs.analysis import charts
from runs.models import Run, Sample


def page_data(response, element_id):
    html = response.content.decode()
    start = html.index(f'<script id="{element_id}" type="application/json">') + len(
        f'<script id="{element_id}" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])


def test_the_results_page_of_40_runs_of_120_samples_reads_a_bounded_number_of_queries(
    client_in, make_batch, django_assert_max_num_queries
):
    batch = make_batch(threads=(1, 2, 4, 8, 16))
    assert batch.runs.count() == 40

    # The first view: the batch's header read with its stored answer (none yet), then the
    # whole batch and what its answer is built from, and the answer stored.
    with django_assert_max_num_queries(9):
        response = client_in.get(f"/batches/{batch.pk}/results")

    assert response.status_code == 200
    data = page_data(response, "results-data")
    assert [s["label"] for s in data["series"]] == ["flush=1", "flush=2"]
    point = data["series"][0]["points"][0]
    # the scaling chart's y is the cell's throughput, the geometric mean of its repeats
    assert point["y"] == pytest.approx(101.494, abs=0.001)  # 4 repeats from 100 to 103
    assert (point["x"], point["yMin"], point["yMax"], point["n"]) == (
        1,
        100,
        103,
        4,
    )
    assert data["reference"]["threads"] == 10  # 4 cores x 2 + 2 disks
    assert len(data["timeline"]) == 40
    assert len(data["timeseries"]) == 2  # each series' first repeat at its peak


def chart_points(chart) -> int:
    """The [x, y] points and {"x", "y"} points of a page's chart data, all charts."""
    if isinstance(chart, dict):
        if "x" in chart and "y" in chart:
            return 1
        return sum(chart_points(v) for v in chart.values())
    if isinstance(chart, list):
        if len(chart) == 2 and all(isinstance(v, int | float) for v in chart):
            return 1
        return sum(chart_points(v) for v in chart)
    return 0


def test_the_results_page_of_200_runs_stays_within_its_point_budget_and_counts_nothing(
    client_in, make_batch
):
    batch = make_batch(threads=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), repeats=10, samples=120)
    chosen = list(batch.runs.order_by("position").values_list("pk", flat=True)[:8])
    runs = ",".join(map(str, chosen))
    url = f"/batches/{batch.pk}/results?runs={runs}&counter=Innodb_data_fsyncs"

    with CaptureQueriesContext(connection) as queries:
        response = client_in.get(url)

    assert len(queries) <= 8
    assert not [q["sql"] for q in queries if "COUNT(" in q["sql"].upper()]
    data = page_data(response, "results-data")
    assert len(data["timeline"]) == 200 and len(data["timeseries"]) == 8
    assert chart_points(data) <= charts.POINT_BUDGET
    peak = Sample.objects.filter(run__batch=batch).aggregate(peak=Max("tps"))["peak"]
    assert max(p[1] for line in data["timeline"] for p in line["points"]) == peak


def test_the_results_page_with_a_counter_reads_one_query_more(
    client_in, make_batch, django_assert_max_num_queries
):
    batch = make_batch(threads=(1, 2), repeats=1, samples=10)
    first = batch.runs.get(position=0)
    with django_assert_max_num_queries(9):
        response = client_in.get(
            f"/batches/{batch.pk}/results?runs={first.pk}&counter=Innodb_data_fsyncs"
        )
    data = page_data(response, "results-data")
    assert data["counter"] == "Innodb_data_fsyncs"
    assert data["timeseries"][0]["counter"] == [[2.0, 10.0], [3.0, 10.0], [4.0, 10.0], [5.0, 10.0]]


def test_a_long_series_is_downsampled_keeping_its_peak(client_in, make_batch):
    batch = make_batch(threads=(1,), repeats=1, samples=2000, spike_at=1234)
    first = batch.runs.get(position=0)
    response = client_in.get(f"/batches/{batch.pk}/results?runs={first.pk}")
    data = page_data(response, "results-data")
    tps = data["timeseries"][0]["tps"]
    assert len(tps) <= charts.MAX_CHART_POINTS
    assert [1234.0, 99999.0] in tps
    assert max(p[1] for p in data["timeline"][0]["points"]) == 99999.0


def test_the_live_page_and_its_progress_read_a_bounded_number_of_queries(
    client_in, make_batch, django_assert_max_num_queries
):
    batch = make_batch(threads=(1, 2, 4, 8, 16))
    with django_assert_max_num_queries(8):
        page = client_in.get(f"/batches/{batch.pk}/")
    assert page.status_code == 200 and b'id="matrix-grid"' in page.content
    # the session and user, the batch, its runs counted, the current run, the grid's cells
    # counted, the runs of the page
    with django_assert_max_num_queries(7):
        progress = client_in.get(f"/batches/{batch.pk}/progress").json()
    assert progress["finished"] == progress["total"] == 40
    assert progress["current"] is None


def test_the_report_table_shows_ratios_to_the_chosen_baseline(client_in, make_batch):
    batch = make_batch(threads=(4,), repeats=1, samples=3)
    html = client_in.get(f"/batches/{batch.pk}/results?baseline=1").content.decode()
    table = html[html.index('id="report-table"') :]
    assert "0.50" in table[: table.index("</table>")]  # flush=1 is half of flush=2


def test_compare_gives_a_verdict_per_pair(client_in, make_batch, django_assert_max_num_queries):
    one = make_batch(threads=(1, 2), repeats=3, samples=3)
    two = make_batch(threads=(1, 2), repeats=1, samples=3)
    with django_assert_max_num_queries(10):
        response = client_in.get(f"/compare?s=b{one.pk}&s=b{two.pk}&s=b{one.pk}")
    html = response.content.decode()
    assert "too few repeats (n=1; 3 needed)" in html
    assert html.count("<h2>batch ") == 1  # one pair: the repeated key is dropped
    assert "corrected together with Holm's correction" in html  # issue 24: named on the page

    same = client_in.get(f"/compare?s=b{one.pk}&s=b{one.pk}x&s=b{one.pk}").content.decode()
    assert "Choose at least two" in same


def test_compare_of_runs_by_their_ids(client_in, make_batch):
    batch = make_batch(threads=(1,), repeats=2, samples=3)
    a, b = Run.objects.filter(batch=batch, settings__innodb_flush_log_at_trx_commit="1")
    html = client_in.get(f"/compare?s=r{a.pk}&s={b.pk}").content.decode()
    assert f"run {b.pk} of batch {batch.pk}" in html
    assert "too few repeats (n=1; 3 needed)" in html


def test_two_single_runs_get_an_answer_from_their_interval_samples(client_in, make_batch):
    # Recorded: two 12 s oltp_point_select runs of the same cell, their batch means of the
    # interval tps (tests/fixtures/recorded/point_long_*.txt).
    batch = make_batch(threads=(1,), repeats=1, samples=3)
    a, b = batch.runs.order_by("position")
    Run.objects.filter(pk=a.pk).update(
        summary={**a.summary, "tps": 8407.05, "interval_batch_means": [7715.37, 9101.57, 7771.37]}
    )
    Run.objects.filter(pk=b.pk).update(
        summary={**b.summary, "tps": 22976.22,
                 "interval_batch_means": [25113.32, 23986.74, 20110.6]}
    )  # fmt: skip

    html = client_in.get(f"/compare?s=r{a.pk}&s=r{b.pk}").content.decode()

    assert "faster" in html and "one run each, from its interval samples" in html
    assert "not between runs" in html  # the caveat, on the verdict


@pytest.mark.parametrize("query", ["baseline=99", "runs=abc,-1", "counter=nope", "baseline=x"])
def test_odd_query_strings_fall_back_to_defaults(client_in, make_batch, query):
    batch = make_batch(threads=(1,), repeats=1, samples=3)
    assert client_in.get(f"/batches/{batch.pk}/results?{query}").status_code == 200


def test_the_live_page_gets_the_lines_a_run_printed_before_it_followed_it(client_in, make_batch):
    batch = make_batch(threads=(1,), repeats=1, samples=1)
    run = batch.runs.get(position=0)
    Run.objects.filter(pk=run.pk).update(
        raw_log="".join(f"[ {i}s ] thds: 1 tps: {i}\n" for i in range(1, 101))
    )
    tail = client_in.get(f"/batches/{batch.pk}/progress?tail={run.pk}").json()["tail"]
    assert len(tail) == 40 and tail[-1] == "[ 100s ] thds: 1 tps: 100"
    other = make_batch(threads=(1,), repeats=1, samples=1)
    assert client_in.get(f"/batches/{other.pk}/progress?tail={run.pk}").json()["tail"] == []
