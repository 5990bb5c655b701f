"""The servers table in a real browser (Debian's Chromium through Playwright) against
uvicorn (issue 47): a real two-target batch's answer page, its servers table one row with
the second server's ratio, interval and verdict under that server's name."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from runs.analysis.noise import verdicts
from runs.services.answers.relative import batch_relative
from tests.api.test_servers_table import two_target_batch
from tests.execution.test_targets_axis import second_db, second_target  # noqa: F401 - fixtures
from tests.web.test_run_page_browser import logged_in
from tests.web.test_ui import ARTIFACTS, browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_the_answer_page_reads_the_second_servers_ratio(
    browser,  # noqa: F811
    session_cookie,
    celery_worker,
    make_plan,
    target,
    second_target,  # noqa: F811
):
    b = logged_in(browser, session_cookie)
    batch = two_target_batch(make_plan, second_target)

    page = b.open(f"/batches/{batch.pk}/results")

    section = page.locator("section#relative")
    expect(section.locator("h2")).to_have_text(f"Relative to {target.name}")
    heads = section.locator("thead tr").first.locator("th.group-start")
    expect(heads).to_have_text([f"{target.name} (baseline)", second_target.name])
    rows = section.locator("tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td").nth(1)).to_have_text("all runs")
    # the second server's first cell: its ratio, then its interval and verdict
    shown = rows.first.locator("td.group-start").nth(1)
    ratio, below = shown.inner_text().split("\n", 1)
    table = batch_relative(batch=batch)
    assert table is not None
    verdict = table.families[0].rows[0].cells[1].verdict
    assert verdict is not None and verdict.ratio is not None
    assert ratio.strip() == f"{verdict.ratio:.2f}"
    assert below.strip() == f"{verdict.interval} · {verdict.text}"
    assert verdict.verdict in (verdicts.FASTER, verdicts.SLOWER, verdicts.SAME)
    assert (shown.get_attribute("title") or "").startswith(verdict.text)
    b.shot("servers-table-two-targets")
    section.screenshot(path=str(ARTIFACTS / "servers-table-two-targets-section.png"))
    assert b.errors == []
