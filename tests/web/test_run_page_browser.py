"""The run page and the live batch page in a real browser (Debian's Chromium through
Playwright) against uvicorn: a forced shutdown said, the histogram drawn, the raw log
filtered, and a live page that stays true without a reload while a real worker runs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import expect

from runs.execution.stream.live import recent_key
from runs.models import Batch, Run, Status
from runs.services import batches
from runs.services.imports.importer import log_import
from tests.helpers import wait_for_batch
from tests.web.test_events import stored_run
from tests.web.test_ui import Browser, browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"


def imported(name: str) -> Run:
    run = log_import(log=io.BytesIO((FIXTURES / f"{name}.txt").read_bytes()), target=None).run
    assert run is not None
    return run


def logged_in(b: Browser, session_cookie: dict[str, str]) -> Browser:
    b.page.context.add_cookies(
        [{"name": "sessionid", "value": session_cookie["sessionid"], "url": b.base}]
    )
    return b


def test_the_run_page_after_a_forced_shutdown(browser, session_cookie):  # noqa: F811
    b = logged_in(browser, session_cookie)
    run = imported("oltp_forced_shutdown")

    page = b.open(f"/runs/{run.pk}/")

    expect(page.locator("#run-outcome")).to_have_text("forced shutdown, 2 transactions unfinished")
    expect(page.locator("#run-rates")).to_contain_text("unfinished transactions on forced shutdown")
    expect(page.locator("#run-no-histogram")).to_contain_text(
        "sysbench prints no latency histogram on a forced shutdown"
    )
    page.fill("#run-log-filter", "EXPIRED")
    expect(page.locator("#run-log-count")).to_have_text("1 matching lines")
    expect(page.locator("#run-log-lines span:visible")).to_have_text(
        ["FATAL: The --max-time limit has expired, forcing shutdown...\n"]
    )
    b.shot("run-forced-shutdown")
    assert b.errors == []


def test_the_histogram_in_sysbenchs_buckets_on_a_log_axis(browser, session_cookie):  # noqa: F811
    b = logged_in(browser, session_cookie)
    run = imported("oltp_histogram")
    buckets = len(Run.objects.get(pk=run.pk).histogram)

    page = b.open(f"/runs/{run.pk}/")
    drawn = page.evaluate(
        """async () => { const { Chart } = await import("chart.js");
                   const c = Chart.getChart('run-histogram-chart');
                   return [c.data.datasets[0].data.length, c.options.scales.x.type,
                           c.data.datasets[0].data.reduce((s, p) => s + p.y, 0)]; }"""
    )
    b.shot("run-histogram")

    assert drawn[0] == buckets and drawn[1] == "logarithmic"
    assert drawn[2] == pytest.approx(100, abs=0.01)  # shares of the requests, in %

    page = b.open(f"/batches/{run.batch_id}/results")
    overlaid = page.evaluate(
        "async () => (await import('chart.js')).Chart.getChart('histogram-chart')"
        ".data.datasets.length"
    )
    assert overlaid == 1
    assert b.errors == []


def test_the_live_pages_fill_in_what_finished_without_a_reload(
    browser,  # noqa: F811
    session_cookie,
    celery_worker,
    make_plan,
):
    b = logged_in(browser, session_cookie)
    plan = make_plan(
        test="oltp_read_only",
        threads=[1, 2],
        options={"time": 3, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 20},
    )
    batch = batches.batch_launch(plan=plan, launched_by="ui")
    first = batch.runs.get(position=0)

    page = b.open(f"/batches/{batch.pk}/")
    page.evaluate("() => { window.notReloaded = true; }")
    expect(page.locator("#cancel-form")).to_be_visible()
    expect(page.locator("#results-link")).to_have_text("Results are ready", timeout=120_000)

    for run in batch.runs.all():
        expect(page.locator(f'tr[data-run="{run.pk}"] [data-figure="tps"]')).not_to_be_empty()
        expect(
            page.locator(f'tr[data-run="{run.pk}"] [data-figure="latency_pct_ms"]')
        ).not_to_be_empty()
    expect(page.locator("#cancel-form")).to_have_count(0)  # nothing left to cancel
    assert page.locator("#batch-bar").evaluate("(e) => e.style.width") == "100%"
    assert page.evaluate("() => window.notReloaded") is True
    b.shot("batch-finished-live")
    assert wait_for_batch(batch).status == Status.DONE
    first.refresh_from_db()
    assert page.locator(f'tr[data-run="{first.pk}"] [data-figure="tps"]').text_content() == (
        f"{first.summary['tps']:.2f}"
    )
    assert b.errors == []


def test_the_run_page_fills_in_its_summary_when_the_run_ends(
    browser,  # noqa: F811
    session_cookie,
    celery_worker,
    make_plan,
):
    b = logged_in(browser, session_cookie)
    plan = make_plan(
        test="oltp_read_only",
        options={"time": 3, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 20},
    )
    batch = batches.batch_launch(plan=plan, launched_by="ui")
    run = batch.runs.get()

    page = b.open(f"/runs/{run.pk}/")
    page.evaluate("() => { window.notReloaded = true; }")
    expect(page.locator("#run-outcome")).to_have_text("completed", timeout=120_000)
    expect(page.locator("#run-latency")).to_be_visible()
    # The page's modules keep Chart.js to themselves: the test takes it for its polling.
    page.evaluate("async () => { window.Chart = (await import('chart.js')).Chart; }")
    page.wait_for_function("() => Chart.getChart('run-histogram-chart') !== undefined")
    expect(page.locator("#run-last-lines")).to_be_hidden()
    expect(page.locator("#run-log-lines")).to_contain_text("Threads fairness:")
    assert page.evaluate("() => window.notReloaded") is True
    b.shot("run-ended-live")
    assert b.errors == []


def test_the_machines_are_drawn_under_the_tps_chart(
    browser,  # noqa: F811 - the fixture
    session_cookie,
    celery_worker,
    make_plan,
):
    b = logged_in(browser, session_cookie)
    plan = make_plan(options={"time": 3, "report-interval": 1, "tables": 1, "table-size": 100})
    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))
    run = batch.runs.get()

    page = b.open(f"/runs/{run.pk}/")

    # sysbench and the server shared this machine: one side, named for both roles.
    side = page.locator("#host-metrics .host-side")
    expect(side).to_have_count(1)
    expect(side.locator(".host-name")).to_have_text("local")
    expect(side.locator(".host-roles")).to_have_text("Server host and load host (one machine)")
    assert side.get_attribute("data-role") == "server load"
    expect(page.locator("#host-bottleneck")).to_contain_text("Bottleneck:")
    page.evaluate("async () => { window.Chart = (await import('chart.js')).Chart; }")
    stored = run.host_metrics.filter(role="server").count()
    # A chart is made when it comes into view: the first, brought to the top of the
    # window, is; the last, 1,300 px below it, is not.
    canvases = page.locator("#host-metrics canvas")
    canvases.first.evaluate("(c) => c.scrollIntoView({block: 'start'})")
    page.wait_for_function(
        f"() => Chart.getChart(document.querySelector('#host-metrics canvas'))"
        f"?.data.datasets[0].data.length === {stored}"
    )
    assert page.evaluate("(c) => Chart.getChart(c) === undefined", canvases.last.element_handle())
    for i in range(canvases.count()):
        canvases.nth(i).scroll_into_view_if_needed()
        page.wait_for_function("(c) => Chart.getChart(c)", arg=canvases.nth(i).element_handle())
    drawn = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('#host-metrics canvas')]
             .map((c) => { const chart = Chart.getChart(c);
               return [c.dataset.chart, {
                 points: chart.data.datasets.map((d) => d.data.length),
                 labels: chart.data.datasets.map((d) => d.label),
                 axis: chart.options.scales.y.title.text,
                 top: Math.max(...chart.data.datasets.flatMap(
                   (d) => d.data.map((p) => p.y)))}]; }))"""
    )
    assert list(drawn) == ["cpu", "ctxt", "iops", "mbs", "net", "mem"]
    for name in ("cpu", "iops", "mbs", "net", "mem"):
        assert set(drawn[name]["points"]) == {stored}, name  # a point a second, every series
    # Disk MB/s read and written, on an axis of its own (not the IOPS one).
    assert drawn["mbs"]["labels"] == ["disk read MB/s", "disk write MB/s"]
    assert (drawn["iops"]["axis"], drawn["mbs"]["axis"]) == ("IOPS", "MB/s")
    assert drawn["net"]["labels"] == ["received KB/s", "sent KB/s"]
    assert drawn["mem"]["labels"] == ["used MB", "cache MB", "dirty MB"]
    assert drawn["mem"]["top"] > 0  # this machine uses memory
    # tps and qps each on its own axis; the ignored errors per second on theirs, a point
    # a sample.
    axes = page.evaluate(
        "() => { const c = Chart.getChart('run-chart');"
        " return [c.data.datasets.map((d) => d.yAxisID), c.options.scales.y.title.text,"
        " c.options.scales.yq.title.text, c.data.datasets[3].label,"
        " c.data.datasets[3].data.length, c.data.datasets[0].data.length]; }"
    )
    assert axes[:4] == [["y", "yq", "y1", "ye"], "tps", "qps", "ignored errors/s"]
    assert axes[4] == axes[5] > 0
    b.shot("run-host-metrics")
    assert b.errors == []


def test_the_live_page_shows_the_viewer_a_gap_the_server_could_not_fill(
    browser,  # noqa: F811
    session_cookie,
):
    """Samples #4 and #5 are neither stored nor in Redis when #6 comes: the server sends a
    `gap` event, and the viewer reads it among the run's lines."""
    b = logged_in(browser, session_cookie)
    run = stored_run(Status.RUNNING, samples=3)
    run.batch.params = {"options": {"percentile": 99}}  # its samples do not say theirs
    run.batch.save(update_fields=["params"])
    sample_6 = {"seq": 6, "time_s": 6.0, "threads": 1, "tps": 106.0, "received_at": 0.0}
    live = redis.Redis.from_url(settings.REDIS_URL)
    live.rpush(recent_key(run.pk), json.dumps({"type": "sample", "sample": sample_6}))
    try:
        page = b.open(f"/runs/{run.pk}/")
        expect(page.locator("#run-lines")).to_contain_text(
            "benchdash: 2 samples (after #3, before #6) did not reach this page live",
            timeout=30_000,  # the server waits for the database to fill it first
        )
        expect(page.locator("#run-samples")).to_have_text("4")  # #1 to #3, then #6
        # The chart's latency series is named for the plan's percentile.
        label = "async () => (await import('chart.js')).Chart.getChart('run-chart')"
        assert page.evaluate(label + ".data.datasets[2].label") == "latency p99 (ms)"
        b.shot("run-live-gap")
    finally:
        live.delete(recent_key(run.pk))
    assert b.errors == []


def test_the_live_batch_page_says_a_run_ended_in_a_forced_shutdown(
    browser,  # noqa: F811
    session_cookie,
    make_batch,
):
    """The live batch page fills in the outcome of a run that ends while it is open, from
    the progress it polls (the rows are written as a worker writes them)."""
    b = logged_in(browser, session_cookie)
    batch = make_batch(status=Status.RUNNING, started_at=timezone.now())
    first, second = (
        Run.objects.create(
            batch=batch, position=i, round=0, cell_key="c", threads=2,
            status=Status.RUNNING if i == 0 else Status.QUEUED,
            started_at=timezone.now() if i == 0 else None,
        )
        for i in (0, 1)
    )  # fmt: skip

    page = b.open(f"/batches/{batch.pk}/")
    page.evaluate("() => { window.notReloaded = true; }")
    expect(page.locator(f'[data-status-of="{first.pk}"]')).to_have_text("running")
    Run.objects.filter(pk=first.pk).update(
        status=Status.DONE,
        outcome="forced_shutdown",
        finished_at=timezone.now(),
        summary={"outcome": "forced_shutdown", "tps": 620.6, "unfinished_transactions": 200},
    )
    Run.objects.filter(pk=second.pk).update(status=Status.RUNNING, started_at=timezone.now())

    expect(page.locator(f'[data-status-of="{first.pk}"]')).to_have_text(
        "done (forced shutdown, 200 unfinished)", timeout=20_000
    )
    expect(page.locator(f'tr[data-run="{first.pk}"] [data-figure="tps"]')).to_have_text("620.6")
    Run.objects.filter(pk=second.pk).update(
        status=Status.DONE, outcome="ok", finished_at=timezone.now(), summary={"tps": 700.0}
    )
    Batch.objects.filter(pk=batch.pk).update(status=Status.DONE, finished_at=timezone.now())

    expect(page.locator("#results-link")).to_have_text("Results are ready", timeout=20_000)
    expect(page.locator(f'[data-status-of="{second.pk}"]')).to_have_text("done")
    expect(page.locator(f'[data-status-of="{first.pk}"]')).to_have_text(
        "done (forced shutdown, 200 unfinished)"
    )
    assert page.evaluate("() => window.notReloaded") is True
    b.shot("batch-forced-shutdown-live")
    assert b.errors == []
