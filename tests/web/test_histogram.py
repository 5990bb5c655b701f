"""The latency histogram in sysbench's own buckets beside the CDF: the results page
overlays the chosen runs (stored runs with a histogram, tests/stored.py)."""

from __future__ import annotations

import json

import pytest

from tests.stored import HISTOGRAM

pytestmark = pytest.mark.django_db


def test_the_results_page_overlays_the_chosen_runs_histograms(client_in, make_batch):
    batch = make_batch(threads=(1, 2), repeats=1, samples=5)
    ids = list(batch.runs.order_by("position").values_list("pk", flat=True))

    response = client_in.get(f"/batches/{batch.pk}/results", {"runs": ids[:3]})
    html = response.content.decode()
    data = json.loads(
        html.split('id="results-data" type="application/json">')[1].split("</script>")[0]
    )

    assert 'id="histogram-chart"' in html
    assert [line["run"] for line in data["histogram"]] == ids[:3]
    total = sum(count for _, count in HISTOGRAM)
    first = data["histogram"][0]["points"]
    assert [ms for ms, _ in first] == [ms for ms, _ in HISTOGRAM]
    assert first[0][1] == pytest.approx(100 * HISTOGRAM[0][1] / total, abs=1e-4)
