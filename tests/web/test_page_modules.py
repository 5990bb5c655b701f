"""Every page that loads a script, in Chromium: the page scripts are ES modules (one entry
module per page, the rest imported by name through the import map of templates/base.html),
so a name the map lacks, a file missing from static/ or vendor/, or an import of a name a
module does not export fails the page's whole script. Each page here loads all its modules,
runs them without a console error, and draws what it draws; the pages' own tests check
what the charts hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, Request, Response, expect

from runs.models import Plan
from tests.api.test_history import stored_night
from tests.web.test_run_page_browser import logged_in
from tests.web.test_ui import Browser, browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench" / "oltp_read_write.txt"

# Imports every entry module of the page again: the browser keeps each module it loaded, so
# this runs nothing twice, and rejects with the first failed import of the page, if any.
ENTRY_MODULES = """async () => {
    const entries = [...document.querySelectorAll("script[type=module][src]")].map((s) => s.src);
    await Promise.all(entries.map((src) => import(src)));
    return entries.map((src) => new URL(src).pathname);
}"""
CHARTS = "async () => Object.keys((await import('chart.js')).Chart.instances).length"
CANVASES = "() => document.querySelectorAll('canvas').length"


def loaded(page: Page) -> tuple[list[str], int, int]:
    """The entry modules of the page, all imported; the charts its modules drew; its canvases."""
    page.wait_for_load_state("networkidle")
    return page.evaluate(ENTRY_MODULES), page.evaluate(CHARTS), page.evaluate(CANVASES)


def test_every_page_with_a_script_loads_its_modules_without_an_error(
    browser,  # noqa: F811
    session_cookie,
    make_batch,
    stored_plan: Plan,
):
    b: Browser = logged_in(browser, session_cookie)
    failed: list[str] = []

    def aborted(request: Request) -> None:
        # A live page's event stream still open when the test goes to the next page is
        # cut by the browser (ERR_ABORTED): the page was left, no request failed.
        if not (
            request.url.split("?")[0].endswith("/events") and "ABORTED" in str(request.failure)
        ):
            failed.append(f"{request.url}: {request.failure}")

    b.page.on("requestfailed", aborted)

    def refused(response: Response) -> None:
        if response.status >= 400:
            failed.append(f"{response.status} {response.url}")

    b.page.on("response", refused)
    batch = make_batch(threads=(1, 2), repeats=2, samples=10)
    other = make_batch(threads=(1, 2), repeats=2, samples=10)
    for night in range(4):
        stored_night(stored_plan, night, 1000.0 + night)
    run = batch.runs.order_by("position").first()
    assert run is not None

    drawn = {}
    for path, entry in [
        (f"/batches/{batch.pk}/", "batch_live.js"),
        (f"/batches/{batch.pk}/results", "batch_results.js"),
        (f"/runs/{run.pk}/", "live_run.js"),
        (f"/compare?s=b{batch.pk}&s=b{other.pk}", "compare.js"),
        (f"/plans/{stored_plan.pk}/history", "history.js"),
        (f"/plans/{stored_plan.pk}/", "plan_editor.js"),
        ("/plans/new", "plan_editor.js"),
    ]:
        b.page.goto(b.base + path)
        entries, charts, canvases = loaded(b.page)
        assert f"/static/js/{entry}" in entries, (path, entries)
        drawn[path] = (charts, canvases)
        if entry == "plan_editor.js":  # it asks the server what the plan runs, and says it
            expect(b.page.locator("#summary-figures")).not_to_have_text("checking…")

    page = b.open("/import")
    page.fill("#id_text", LOG.read_text())
    page.click("button[value=preview]")
    entries, charts, canvases = loaded(page)
    drawn["/import"] = (charts, canvases)
    assert entries == ["/static/js/import_preview.js"]

    # A page without a script of its own still reads the import map of every page.
    b.page.goto(b.base + "/plans/")
    assert loaded(b.page) == ([], 0, 0)

    # The modules ran: (charts drawn, canvases) of each page, every canvas drawn but those
    # that wait for what a finished batch or a run without host metrics never sends.
    assert drawn == {
        f"/batches/{batch.pk}/": (0, 1),  # the live chart of the run followed: none
        f"/batches/{batch.pk}/results": (7, 7),
        f"/runs/{run.pk}/": (1, 1),  # tps; each machine's 6 charts come with its first row
        f"/compare?s=b{batch.pk}&s=b{other.pk}": (1, 1),
        # the nights' one cell, and the 4 cells of the two batches launched by hand (the
        # history holds every launch of the plan)
        f"/plans/{stored_plan.pk}/history": (5, 5),
        f"/plans/{stored_plan.pk}/": (0, 0),
        "/plans/new": (0, 0),
        "/import": (1, 1),
    }
    assert b.errors == [] and failed == []


def test_the_first_batch_ticked_is_the_baseline_of_the_comparison(
    browser,  # noqa: F811
    session_cookie,
    make_batch,
):
    # issue 37: the batch list reads newest first and posted its boxes in that order, so the
    # newer batch became the baseline whichever the user ticked first.
    b: Browser = logged_in(browser, session_cookie)
    older = make_batch(threads=(1,), repeats=1, samples=3)
    newer = make_batch(threads=(1,), repeats=1, samples=3)
    page = b.open("/")
    page.check(f"input[value=b{older.pk}]")
    page.check(f"input[value=b{newer.pk}]")
    expect(page.locator("#compare-baseline")).to_have_text(f"baseline: batch {older.pk}")

    page.click("button:text('Compare selected')")
    page.wait_for_url(f"**/compare?s=b{older.pk}&s=b{newer.pk}")
    expect(page.locator("#compare-picker li").first).to_contain_text(f"batch {older.pk}")
    expect(page.locator("#compare-picker li").first).to_contain_text("baseline")
    assert b.errors == []
