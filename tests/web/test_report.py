# ruff: noqa: RUF001  (the times sign is what people read in verdicts)
"""The answers on the results page, and the report to share: downloaded from the results
page, then opened from the file in Chromium with the network cut off; its charts are
drawn and no console error shows. The API serves the same answers and report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from runs.models import Batch, Run
from tests.web.test_ui import ARTIFACTS, browser, chart_points  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def add_rate_runs(batch: Batch) -> None:
    """Open-loop runs at 2 threads, --rate 1,000 to 8,000 (the last one not kept up)."""
    figures = [(1000, 1001.2, 0.32, 0), (2000, 1966.0, 0.26, 1), (4000, 4010.9, 0.2, 0),
               (8000, 6200.0, 95.0, 4100)]  # fmt: skip
    start = batch.runs.count()
    Run.objects.bulk_create(
        Run(
            batch=batch, position=start + i, round=0, threads=2, status="done",
            cell_key=json.dumps({"options": {"rate": str(rate)}, "settings": {}, "threads": 2},
                                sort_keys=True),
            options={"rate": rate, "threads": 2},
            reason="" if i == 0 else f"rate search: {rate:,} tps",
            summary={"tps": achieved, "latency_pct_ms": p95, "interval_tps": {"median": achieved},
                     "queue_length_max": queue},
        )
        for i, (rate, achieved, p95, queue) in enumerate(figures)
    )  # fmt: skip


def test_the_results_page_answers_and_its_report_reads_offline(
    browser,  # noqa: F811  (the fixture of test_ui.py)
    make_batch,
    django_user_model,
    tmp_path,
):
    b = browser
    django_user_model.objects.create_user("ana2", password="ana-pass-123")
    batch = make_batch(threads=(1, 2), repeats=3, samples=20)
    add_rate_runs(batch)
    b.page.goto(b.base + "/accounts/login/")
    b.page.fill("#id_username", "ana2")
    b.page.fill("#id_password", "ana-pass-123")
    b.page.click("button[type=submit]")

    page = b.open(f"/batches/{batch.pk}/results?baseline=1")
    expect(page.locator("#summary-sentences")).to_contain_text(
        "flush=1 is 2.0× slower than flush=2 at 1 thread (95 % CI"
    )
    expect(page.locator("#report-table")).to_contain_text("slower")
    expect(page.locator("#extra-runs")).to_contain_text("rate search: 8,000 tps")
    assert chart_points(page, "rate-achieved-chart") == 4
    assert chart_points(page, "rate-p95-chart") == 4
    # issue 24: "offered" is y = x on the chart's own scales (log x, linear y): sampled along
    # the offered range, not two end points joined straight, which bends on a log axis
    offered = page.evaluate(
        """async () => (await import("chart.js")).Chart.getChart("rate-achieved-chart")
             .data.datasets.find((d) => d.label === "offered").data"""
    )
    assert len(offered) > 10 and all(p["x"] == pytest.approx(p["y"]) for p in offered)
    assert offered[0]["x"] == pytest.approx(1000) and offered[-1]["x"] == pytest.approx(8000)
    # Every chart redrawn at another width: one the annotation plugin had not seen made
    # threw on its next update (a CI run caught it on a resize the page's layout caused).
    size = page.viewport_size
    page.set_viewport_size({"width": 900, "height": 700})
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.set_viewport_size(size)
    assert b.errors == []
    b.shot("20-results-answers")

    with page.expect_download() as caught:
        page.click("#report-link")
    report = Path(tmp_path / "report.html")
    caught.value.save_as(report)
    html = report.read_text()
    assert not re.search(r"""src=["']?(https?:)?//""", html)  # nothing to fetch
    assert "<link" not in html
    # Its links lead to benchdash (the base URL), not to paths of a server the file lacks.
    run = batch.runs.order_by("position").first()
    assert f'href="{settings.BENCHDASH_BASE_URL}/runs/{run.pk}/"' in html
    assert not re.search(r"""href=["']?/""", html)

    offline = b.page.context.new_page()
    fetched: list[str] = []

    def only_files(route):
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            fetched.append(route.request.url)
            route.abort()

    offline.route("**/*", only_files)
    offline.on("console", lambda m: b.errors.append(m.text) if m.type == "error" else None)
    offline.on("pageerror", lambda e: b.errors.append(str(e)))
    offline.goto(report.as_uri())
    offline.wait_for_load_state("load")
    # Every chart of the results page, the runs over time as it shows them by default too.
    for canvas in ("report-scaling-chart", "report-latency-chart", "rate-achieved-chart",
                   "rate-p95-chart", "timeseries-chart", "timeseries-latency-chart",
                   "timeline-chart", "cdf-chart", "histogram-chart"):  # fmt: skip
        assert chart_points(offline, canvas) > 0, canvas
    # The table of the runs is shown whole, nothing behind a scroll bar.
    clipped = offline.evaluate(
        """() => [...document.querySelectorAll('.table-wrap')]
             .filter((w) => w.scrollWidth > w.clientWidth + 1
                            || getComputedStyle(w).overflowX !== 'visible')
             .map((w) => w.querySelector('table').id)"""
    )
    assert clipped == []
    expect(offline.locator("#summary-sentences")).to_contain_text("2.0× slower than flush=2")
    expect(offline.locator("#report-verdicts")).to_contain_text("baseline")
    expect(offline.locator("#report-replay")).to_contain_text('"seed": 1')
    assert "s3cret-target-pw" not in html
    assert fetched == []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    offline.screenshot(path=str(ARTIFACTS / "21-report-offline.png"), full_page=True)

    assert b.errors == []
