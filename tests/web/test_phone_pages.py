"""The results, batch and run pages on a phone (390 px) in Chromium (issue 56): nothing
makes a page wider than the screen, each wide table scrolls in its own box (the latency
percentiles too), and the report table keeps its cell (threads and setting) at the left
while its verdicts are scrolled to; the run page shows the environment it ran in."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.web.test_narrow_pages import OVERFLOW, PHONE
from tests.web.test_run_page_browser import logged_in
from tests.web.test_ui import ARTIFACTS, browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

# Elements reaching past the screen's right edge with no box of theirs scrolling sideways
# (overflow-x auto, scroll or hidden) inside the screen: what makes a page scroll sideways.
UNBOXED = """() => [...document.querySelectorAll('body *')].filter((e) => {
    const box = e.getBoundingClientRect();
    if (box.width === 0 || box.right <= window.innerWidth + 0.5) return false;
    for (let p = e.parentElement; p; p = p.parentElement) {
      if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX))
        return p.getBoundingClientRect().right > window.innerWidth + 0.5;
    }
    return true;
  }).map((e) => e.id || e.tagName)"""
# The box that scrolls an element sideways, as [its left, its right, its scroll width].
SCROLL_BOX = """(e) => { for (let p = e.parentElement; p; p = p.parentElement) {
    if (getComputedStyle(p).overflowX === 'auto') {
      const b = p.getBoundingClientRect(); return [b.left, b.right, p.scrollWidth]; } }
  return null; }"""


# The table in the middle of the screen, then a thumb's swipe until the verdicts' column
# ends at the right edge of the table's box.
SCROLL_TO_VERDICTS = """(t) => { const wrap = t.parentElement; t.scrollIntoView({block: 'center'});
    const verdict = t.querySelector('td.verdict').getBoundingClientRect();
    wrap.scrollLeft += verdict.right - wrap.getBoundingClientRect().right; }"""
# Whether an element is what shows at its own centre: not covered by another.
ON_TOP = """(e) => { const b = e.getBoundingClientRect();
    return e.contains(document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2)); }"""


def fits_the_phone(page: Page) -> None:
    wide, window = page.evaluate(OVERFLOW)
    assert window == PHONE["width"] and wide <= window, f"{wide} px wide on a {window} px screen"
    assert page.evaluate(UNBOXED) == []


def test_the_results_page_keeps_its_tables_in_their_boxes_and_each_verdict_by_its_cell(
    browser,  # noqa: F811
    session_cookie,
    make_batch,
):
    b = logged_in(browser, session_cookie)
    batch = make_batch(threads=(1, 2), repeats=3, samples=20)
    b.page.set_viewport_size(PHONE)

    page = b.open(f"/batches/{batch.pk}/results?baseline=1")

    fits_the_phone(page)
    latency = page.locator("#latency-table")
    expect(latency).to_be_attached()
    scroll_box = latency.evaluate(SCROLL_BOX)
    assert scroll_box is not None, "#latency-table is in no box of its own that scrolls"
    assert scroll_box[0] >= 0 and scroll_box[1] <= PHONE["width"]

    # Scrolled to its verdicts, the report table still shows the cell each one judges.
    table = page.locator("#report-table")
    table.evaluate(SCROLL_TO_VERDICTS)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    rows = table.locator("tbody tr")
    assert rows.count() == 4
    for n in range(rows.count()):
        row = rows.nth(n)
        judged = row.locator("td:nth-last-child(2)")  # the verdict, or "baseline"
        expect(judged).to_contain_text(re.compile("slower|baseline"))
        verdict = _box(judged)
        setting = row.locator("td:not([rowspan])").first
        expect(setting).to_contain_text("flush=")
        cell = _box(setting)
        assert verdict["x"] >= 0 and verdict["x"] + verdict["width"] <= PHONE["width"] + 0.5
        assert cell["x"] >= 0 and cell["x"] + cell["width"] <= verdict["x"], (cell, verdict)
        on_top = setting.evaluate(ON_TOP)
        assert on_top, f"row {n}: the setting is hidden under the scrolled figures"
    threads = table.locator("td[rowspan]")
    assert threads.count() == 2
    for n in range(threads.count()):
        box = _box(threads.nth(n))
        assert (
            0 <= box["x"] < box["x"] + box["width"] <= _box(table.locator("td.verdict").first)["x"]
        )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "results-390px-verdicts-by-their-cell.png"))
    assert b.errors == []


def test_the_batch_and_run_pages_fit_a_phone_and_the_run_page_shows_its_environment(
    browser,  # noqa: F811
    session_cookie,
    make_batch,
):
    b = logged_in(browser, session_cookie)
    batch = make_batch(threads=(1, 2), repeats=2, samples=20)
    batch.environment["load_host"]["cpu_governor"] = "performance (all 2 CPUs)"
    batch.save(update_fields=["environment"])
    b.page.set_viewport_size(PHONE)

    page = b.open(f"/batches/{batch.pk}/")
    expect(page.locator("#runs-table")).to_contain_text("innodb_flush_log_at_trx_commit=2")
    fits_the_phone(page)
    assert page.locator("#runs-table").evaluate(SCROLL_BOX) is not None
    b.shot("batch-390px")

    page = b.open(f"/runs/{batch.runs.order_by('position').first().pk}/")
    environment = page.locator("#run-environment")
    environment.scroll_into_view_if_needed()
    expect(environment.locator("#run-load-host")).to_contain_text("performance (all 2 CPUs)")
    expect(environment).to_contain_text("Server 10.11.6-MariaDB-log")
    fits_the_phone(page)
    b.shot("run-390px-environment")
    assert b.errors == []


def _box(locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None
    return box
