"""The results pages as people read them in Chromium: on a phone (390 px) nothing makes
the page wider than the screen and the verdicts can be scrolled to; at 1400 px every
column of the alerts table is in the window; the batch timeline names each thread level
above the plot, where it hides none of the runs' points."""

from __future__ import annotations

import pytest
from playwright.sync_api import ViewportSize, expect

from runs.models import Alert, Plan
from tests.web.test_run_page_browser import logged_in
from tests.web.test_ui import browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PHONE: ViewportSize = {"width": 390, "height": 844}
OVERFLOW = "() => [document.documentElement.scrollWidth, window.innerWidth]"


def test_the_results_page_on_a_phone(browser, session_cookie, make_batch):  # noqa: F811
    b = logged_in(browser, session_cookie)
    batch = make_batch(threads=(1, 2), repeats=3, samples=20)
    b.page.set_viewport_size(PHONE)

    page = b.open(f"/batches/{batch.pk}/results?baseline=1")

    wide, window = page.evaluate(OVERFLOW)
    assert wide <= window == 390, "the page is wider than the screen"
    verdict = page.locator("#report-table td.verdict").first
    expect(verdict).to_contain_text("slower")
    verdict.scroll_into_view_if_needed()  # the table scrolls in its own box
    box = verdict.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate(OVERFLOW)[0] <= 390
    for canvas in page.locator("canvas").all():  # no chart wider than the screen
        drawn = canvas.bounding_box()
        assert drawn is None or drawn["x"] + drawn["width"] <= 390 + 0.5
    b.shot("results-390px")
    assert b.errors == []


def test_every_column_of_the_alerts_is_in_the_window(
    browser,  # noqa: F811
    session_cookie,
    make_batch,
    stored_plan: Plan,
):
    b = logged_in(browser, session_cookie)
    batch = make_batch(threads=(1,), repeats=1, samples=3)
    verdict = "\n".join(
        f"oltp_read_write · {t} threads · innodb_flush_log_at_trx_commit=1: re-run at "
        f"{900 + t:,} tps against the step's midpoint 950 tps (levels 1,000 → 900): confirmed"
        for t in (1, 2, 4, 8)
    )
    Alert.objects.create(
        plan=stored_plan, batch=batch, state="confirmed", verdict=verdict,
        cells=[{"label": "8 threads · innodb_flush_log_at_trx_commit=1",
                "steps": [{"text": "tps stepped slower: 1,000 → 900 (-10.0 %) at this night"}]}],
        changes=[{"kind": "variable", "text": "innodb_io_capacity_max: 2000 → "
                  "4000 (ALTER SYSTEM SET in postgresql.auto.conf, read back by the run)"}],
    )  # fmt: skip

    page = b.open(f"/plans/{stored_plan.pk}/history")

    table = page.locator("#history-alerts")
    expect(table).to_contain_text("ALTER SYSTEM")
    window = page.evaluate("() => window.innerWidth")
    assert window == 1400
    for name in ("What changed", "Decision"):
        header = table.locator("th", has_text=name).bounding_box()
        assert header is not None and header["x"] + header["width"] <= window, name
    decide = table.locator("button", has_text="Acknowledge").bounding_box()
    assert decide is not None and decide["x"] + decide["width"] <= window
    assert page.evaluate(OVERFLOW)[0] <= window
    b.shot("history-alerts-1400px")
    assert b.errors == []


def test_the_timeline_names_its_levels_above_the_plot(
    browser,  # noqa: F811
    session_cookie,
    make_batch,
):
    b = logged_in(browser, session_cookie)
    batch = make_batch(threads=(1, 2), repeats=2, samples=20)

    page = b.open(f"/batches/{batch.pk}/results")
    drawn = page.evaluate(
        """async () => { const { Chart } = await import("chart.js");
             const c = Chart.getChart("timeline-chart");
             const levels = c.scales.levels;
             const labels = Object.values(c.options.plugins.annotation?.annotations || {})
               .filter((a) => a.label && a.label.display);
             const first = c.getDatasetMeta(0).data.slice(0, 3).map((p) => [p.x, p.y]);
             return { named: levels ? levels.ticks.map((t) => t.label) : [],
                      levelsBottom: levels ? levels.bottom : null, area: c.chartArea,
                      inside: labels.length, first }; }"""
    )
    expected = [r["level"] for r in page_timeline(page) if r["level"]]
    assert drawn["named"] == expected and expected  # each level named on the top axis
    assert drawn["levelsBottom"] <= drawn["area"]["top"]  # above the plot
    assert drawn["inside"] == 0  # no label drawn over the runs
    for x, y in drawn["first"]:  # the first run's points are in the plot, uncovered
        assert drawn["area"]["left"] <= x <= drawn["area"]["right"]
        assert drawn["area"]["top"] <= y <= drawn["area"]["bottom"]
    assert b.errors == []


def page_timeline(page) -> list[dict]:
    return page.evaluate(
        "() => JSON.parse(document.getElementById('results-data').textContent).timeline"
    )
