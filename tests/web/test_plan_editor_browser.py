"""The plan editor's servers fieldset in a real browser (Debian's Chromium through
Playwright) against uvicorn (issue 47): a configs axis written from an empty form, and the
estimate and the preflight of the plan as it will run, restarts included."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from runs.models import Target
from tests.web.test_run_page_browser import logged_in
from tests.web.test_ui import browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MANAGED = {
    "installs": [{"label": "10.11", "basedir": "/usr", "datadir": "/srv/mariadb"}],
    "timeout_s": 60,
}
SNIPPETS = [
    ("b1e1", "innodb_flush_log_at_trx_commit = 1\nsync_binlog = 1"),
    ("b0e1", "innodb_flush_log_at_trx_commit = 0\nsync_binlog = 1"),
    ("b0e0", "innodb_flush_log_at_trx_commit = 0\nsync_binlog = 0"),
]


def test_a_configs_axis_from_an_empty_form_is_estimated_with_its_restarts(
    browser,  # noqa: F811
    session_cookie,
    local_host,  # made by a migration, but an earlier transactional test may have flushed it
):
    b = logged_in(browser, session_cookie)
    target = Target.objects.create(
        name="db-r", engine="mariadb", host="127.0.0.1", port=1, database="sbtest",
        user="bench", created_by=User.objects.get(username="watcher"),
        restart_mode="managed", restart_config=MANAGED,
    )  # fmt: skip

    page = b.open("/plans/new")
    page.fill("#id_name", "startup flags")
    page.select_option("#id_target", str(target.pk))
    page.select_option("#id_load_host", str(local_host.pk))
    page.select_option("#id_test", "oltp_insert")
    page.fill("#id_threads", "1")
    page.fill("#id_repeats", "3")
    for i, (label, text) in enumerate(SNIPPETS):
        if i:
            page.click("#add-config")
        page.fill(f"#id_config_label_{i}", label)
        page.fill(f"#id_config_text_{i}", text)

    figures = page.locator("#summary-figures")
    expect(figures).to_contain_text("3 cells, 9 runs")
    expect(figures).to_contain_text(re.compile(r"\d+ server restarts \(the put-back"))
    expect(figures).to_contain_text("warm-ups of 10 s")
    # No seed: the order of a launch is its own, and the count says so.
    expect(figures).to_contain_text("about")
    page.fill("#id_seed", "7")
    expect(figures).not_to_contain_text("about")

    page.click("#preflight-button")
    expect(page.locator("#preflight-checks")).to_contain_text(re.compile(r"restart on db-r: "))
    b.shot("plan-editor-configs-axis")
    assert b.errors == []
