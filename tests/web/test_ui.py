"""The web UI in a real browser (Debian's Chromium through Playwright) against the real
stack: uvicorn, a Celery worker, the private MariaDB. One walk through a user's day: log
in, add a target and test it, write a 2x2 plan, preflight, launch, watch it live, read the
results, compare two batches, import a log; no JavaScript error on any page, and a
screenshot of each under test-artifacts/ (not committed)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.db import connections
from django.utils import timezone
from playwright.sync_api import Page, Route, expect, sync_playwright

from runs.models import Batch, LoadHost, Run, Sample
from tests.helpers import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "ui"
FIXTURES = ROOT / "tests" / "fixtures" / "sysbench"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Browser:
    page: Page
    base: str
    errors: list[str] = field(default_factory=list)

    def open(self, path: str) -> Page:
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("networkidle")
        return self.page

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.fixture
def browser(asgi_server, monkeypatch) -> Iterator[Browser]:
    # Playwright's sync API runs an event loop in this thread; the ORM calls the test makes
    # meanwhile are plain synchronous ones. uvicorn is started before this is set.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        context = chromium.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        b = Browser(page=page, base=asgi_server.url)
        page.on(
            "console",
            lambda m: b.errors.append(f"{page.url}: {m.text}") if m.type == "error" else None,
        )
        page.on("pageerror", lambda e: b.errors.append(f"{page.url}: {e}"))
        try:
            yield b
        finally:
            # While Playwright's loop runs, Django keeps this thread's connections apart (a
            # context's, not the thread's): closed here, or nothing closes the test's own
            # and the run cannot drop its database at the end.
            connections.close_all()
        context.close()
        chromium.close()


def chart_points(page: Page, canvas: str) -> int:
    """The points of a chart's first series, once its module has drawn it: page modules run
    after the HTML is shown, so a chart may come a moment after the text it sits under."""
    wait_until(lambda: _points(page, canvas) > 0, timeout=30, what=f"the chart {canvas}")
    return _points(page, canvas)


def _points(page: Page, canvas: str) -> int:
    return page.evaluate(
        "async (id) => { const c = (await import('chart.js')).Chart.getChart(id);"
        " return c ? c.data.datasets[0].data.length : 0 }",
        canvas,
    )


def wait_for_results(b: Browser) -> int:
    expect(b.page.locator("#results-link")).to_have_text("Results are ready", timeout=240_000)
    found = re.search(r"/batches/(\d+)/", b.page.url)
    assert found is not None
    return int(found[1])


def test_a_users_day_in_the_browser(
    browser, celery_worker, mariadb_server, mariadb_db, django_user_model, local_host
):
    b = browser
    django_user_model.objects.create_user("ana", password="ana-pass-123")

    # log in
    b.open("/plans/")
    expect(b.page).to_have_url(re.compile(r"/accounts/login/"))
    b.shot("01-login")
    b.page.fill("#id_username", "ana")
    b.page.fill("#id_password", "ana-pass-123")
    b.page.click("button[type=submit]")
    expect(b.page).to_have_url(re.compile(r"/plans/$"))

    # a target, tested
    page = b.open("/targets/new")
    page.fill("#id_name", "mariadb-ui")
    page.select_option("#id_engine", "mariadb")
    page.fill("#id_host", "127.0.0.1")
    page.fill("#id_port", str(mariadb_server.port))
    page.fill("#id_database", mariadb_db)
    page.fill("#id_user", mariadb_server.user)
    page.fill("#id_password", mariadb_server.password)
    page.fill("#id_cpu_cores", "2")
    page.fill("#id_disk_count", "1")
    page.click("button.primary")
    page.click("text=Test connection")
    expect(page.locator("#connection-check")).to_contain_text("MariaDB")
    expect(page.locator("#connection-check")).to_contain_text("granted SUPER")
    assert mariadb_server.password not in page.content()
    b.shot("02-target")

    # a 2x2 plan: threads 1,2 x flush 1,2, 2 seconds a run
    page = b.open("/plans/new")
    page.fill("#id_name", "ui 2x2")
    page.select_option("#id_target", label="mariadb-ui")
    page.select_option("#id_load_host", label="local")
    page.select_option("#id_test", "oltp_read_write")
    page.fill("#id_threads", "1,2")
    page.check('input[name="set__innodb_flush_log_at_trx_commit"][value="1"]')
    page.check('input[name="set__innodb_flush_log_at_trx_commit"][value="2"]')
    page.fill("#id_opt_time", "2")
    page.fill("#id_opt_report-interval", "1")
    page.fill("#id_opt_tables", "1")
    page.fill("#id_opt_table-size", "100")
    page.fill("#id_repeats", "1")
    expect(page.locator("#summary-figures")).to_contain_text("4 cells, 4 runs")
    b.shot("03-plan-editor")

    page.click("#preflight-button")
    expect(page.locator("#preflight-checks")).to_contain_text("Preflight passed.", timeout=90_000)
    b.shot("04-preflight")

    # launch, and watch the live chart grow
    page.click("#launch-button")
    expect(page).to_have_url(re.compile(r"/batches/\d+/$"))
    seen = "() => Number(document.getElementById('live-batch').dataset.samplesSeen || 0)"
    page.wait_for_function(f"({seen})() >= 1", timeout=120_000)
    first = page.evaluate(seen)
    page.wait_for_function(f"({seen})() > {first}", timeout=60_000)
    assert chart_points(page, "live-chart") >= 1
    b.shot("05-batch-live")
    one = wait_for_results(b)
    assert Batch.objects.get(pk=one).status == "done"
    # the grid followed: each cell's one run, its dot a link, done without a reload
    expect(page.locator("#matrix-grid a.dot.done")).to_have_count(4)
    b.shot("06-batch-finished")

    # the results
    page = b.open(f"/batches/{one}/results")
    expect(page.locator("#report-table tbody tr")).to_have_count(4)
    for canvas in ("scaling-chart", "latency-chart", "timeseries-chart", "timeline-chart"):
        assert chart_points(page, canvas) > 0, canvas
    series = page.evaluate(
        "async () => (await import('chart.js')).Chart.getChart('scaling-chart')"
        ".data.datasets.length"
    )
    assert series == 2
    b.shot("07-batch-results")

    # a second batch of the same plan, launched from the plan list, then both compared
    page = b.open("/plans/")
    page.click("text=Launch")
    expect(page).to_have_url(re.compile(r"/batches/\d+/$"))
    two = wait_for_results(b)
    page = b.open(f"/compare?s=b{one}&s=b{two}")
    expect(page.locator(".compare-table tbody tr")).to_have_count(4)
    # one 2-second run a cell: too few repeats, and too short for its interval samples
    expect(page.locator(".compare-table").first).to_contain_text("too few repeats (n=1; 3 needed)")
    assert chart_points(page, "compare-chart") > 0
    b.shot("08-compare")

    # import a log: preview, then save
    page = b.open("/import")
    page.fill("#id_text", (FIXTURES / "oltp_histogram.txt").read_text())
    page.fill("#id_label", "an old log")
    page.click("button[value=preview]")
    expect(page.locator("#import-preview")).to_contain_text("What the log holds")
    assert chart_points(page, "import-chart") > 0
    b.shot("09-import-preview")
    page.click("button[value=save]")
    expect(page).to_have_url(re.compile(r"/batches/\d+/results$"))
    expect(page.locator("#report-table tbody tr")).to_have_count(1)
    b.shot("10-import-results")

    # every other page, for errors and a picture
    local = LoadHost.objects.get(name="local")
    a_run = Batch.objects.get(pk=one).runs.order_by("position").first()
    assert a_run is not None
    for name, path in [
        ("11-batches", "/"),
        ("12-plans", "/plans/"),
        ("13-targets", "/targets/"),
        ("14-hosts", "/load-hosts/"),
        ("15-host", f"/load-hosts/{local.pk}/"),
        ("16-schedules", "/schedules/"),
        ("17-tokens", "/tokens/"),
        ("18-run", f"/runs/{a_run.pk}/"),
    ]:
        b.open(path)
        b.shot(name)
    # the last page, a finished run's, replays its samples and shows its last lines
    assert chart_points(b.page, "run-chart") > 0
    expect(b.page.locator("#run-lines")).not_to_be_empty()

    assert b.errors == []


def finished_run(samples: int) -> Run:
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    batch = Batch.objects.create(
        load_host=local, params={}, seed=1, status="done", launched_by="ui"
    )
    run = Run.objects.create(
        batch=batch, position=0, round=0, cell_key="c", threads=1, status="done",
        started_at=timezone.now(),
    )  # fmt: skip
    Sample.objects.bulk_create(
        Sample(run=run, seq=seq, time_s=seq, threads=1, tps=100.0 + seq, received_at=timezone.now())
        for seq in range(1, samples + 1)
    )
    return run


def test_the_live_follower_resumes_after_the_last_sample_when_its_stream_fails(
    browser, session_cookie
):
    # The stream is cut after three samples (the browser reconnects by itself), then the
    # web server answers 502 as a proxy does while it restarts (the browser gives up): the
    # follower opens the stream again after the last sample, and draws each sample once.
    run = finished_run(samples=12)
    b = browser
    b.page.context.add_cookies(
        [{"name": "sessionid", "value": session_cookie["sessionid"], "url": b.base}]
    )
    asked: list[str] = []

    def stream(route: Route) -> None:
        asked.append(route.request.url)
        if len(asked) == 1:
            events = route.fetch().text().split("\n\n")
            cut = [e for e in events if "event: status" in e] + [
                e for e in events if "event: sample" in e
            ][:3]
            route.fulfill(
                status=200, content_type="text/event-stream", body="\n\n".join(cut) + "\n\n"
            )
        elif len(asked) == 2:
            route.fulfill(status=502, body="bad gateway")
        else:
            route.continue_()

    b.page.route("**/events*", stream)
    b.open(f"/runs/{run.pk}/")
    # The browser waits 3 s to reconnect and the follower 2 s to open it again after the
    # 502: the default 5 s of `expect` is that wait exactly, too short on a loaded machine.
    expect(b.page.locator("#run-samples")).to_have_text("12", timeout=20_000)  # the chart's points
    xs = b.page.evaluate(
        "async () => (await import('chart.js')).Chart.getChart('run-chart')"
        ".data.datasets[0].data.map((p) => p.x)"
    )
    assert xs == list(range(1, 13))
    assert asked[2].endswith(f"/runs/{run.pk}/events?after=3")
    # The only error is the browser's own, about the 502 answer.
    assert len(b.errors) == 1 and "502 (Bad Gateway)" in b.errors[0], b.errors
