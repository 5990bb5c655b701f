"""The seed write-up walked as a user walks it (issue 47), in a real browser (Debian's
Chromium through Playwright) against uvicorn, a real worker and a managed mariadbd of the
test's own: "single-thread insert under b1e1 / b0e1 / b0e0 startup flags". The target is
opted in on its edit page, the plan written from an empty form with three config snippets
(the binary log on with its server_id in the first, off in the others), launched, and
answered: three cells, each config's ratio against b1e1 with its interval, the fsyncs that
explain them, each run's config and version as read back from its server, and the server's
own config back at the end."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from runs.models import Batch, Status, Target
from tests.execution.test_restarts import managed_instance
from tests.helpers import wait_until
from tests.servers import PrivateMariaDB
from tests.web.test_run_page_browser import logged_in
from tests.web.test_ui import browser  # noqa: F401 - the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# b: the binary log (on, with sync_binlog = 1; off), e: innodb_flush_log_at_trx_commit
SNIPPETS = [
    ("b1e1", "log_bin\nserver_id = 1\nsync_binlog = 1\ninnodb_flush_log_at_trx_commit = 1"),
    ("b0e1", "skip_log_bin\ninnodb_flush_log_at_trx_commit = 1"),
    ("b0e0", "skip_log_bin\ninnodb_flush_log_at_trx_commit = 0"),
]
EXPECTED = {  # what each config's server must show, read back
    "b1e1": {"log_bin": "ON", "sync_binlog": "1", "innodb_flush_log_at_trx_commit": "1"},
    "b0e1": {"log_bin": "OFF", "innodb_flush_log_at_trx_commit": "1"},
    "b0e0": {"log_bin": "OFF", "innodb_flush_log_at_trx_commit": "0"},
}


@pytest.fixture
def managed() -> Iterator[PrivateMariaDB]:
    yield from managed_instance(PrivateMariaDB())


def server_values(server: PrivateMariaDB) -> dict[str, str]:
    db = server.root_connect()
    try:
        cursor = db.cursor()
        cursor.execute(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN "
            "('log_bin', 'sync_binlog', 'innodb_flush_log_at_trx_commit', 'server_id')"
        )
        return {str(name).lower(): str(value) for name, value in cursor.fetchall()}
    finally:
        db.close()


def test_the_startup_flags_write_up_from_an_empty_form(
    browser,  # noqa: F811
    session_cookie,
    celery_worker,
    local_host,
    managed,
):
    user = User.objects.get(username="watcher")
    user.user_permissions.add(Permission.objects.get(codename="manage_restarts"))
    target = Target.objects.create(
        name="mariadb-flags", engine="mariadb", host=managed.host, port=managed.port,
        database="sbtest", user=managed.user, password=managed.password, created_by=user,
    )  # fmt: skip
    original = server_values(managed)
    b = logged_in(browser, session_cookie)

    # the target opted in on its own page: a managed instance, its one install
    page = b.open(f"/targets/{target.pk}/edit")
    page.select_option("#id_restart_mode", "managed")
    install = {"label": "10.11", "basedir": "/usr", "datadir": str(managed.datadir)}
    install["config"] = str(managed.dir / "my.cnf")
    page.fill("#id_restart_config", json.dumps({"installs": [install], "timeout_s": 60}))
    page.click("button.primary")
    expect(page).not_to_have_url(re.compile(r"/edit$"))
    target.refresh_from_db()
    assert target.restart_mode == "managed"

    # the plan from an empty form: one thread, three startup configs, three repeats
    page = b.open("/plans/new")
    page.fill("#id_name", "single-thread insert under startup flags")
    page.select_option("#id_target", str(target.pk))
    page.select_option("#id_load_host", label="local")
    page.select_option("#id_test", "oltp_insert")
    page.fill("#id_threads", "1")
    page.fill("#id_repeats", "3")
    for name, value in (("time", "2"), ("report-interval", "1"), ("tables", "1")):
        page.fill(f"#id_opt_{name}", value)
    page.fill("#id_opt_table-size", "100")
    for i, (label, text) in enumerate(SNIPPETS):
        if i:
            page.click("#add-config")
        page.fill(f"#id_config_label_{i}", label)
        page.fill(f"#id_config_text_{i}", text)
    page.select_option("#id_after_restart", "cold")  # no warm-up: the machine has 2 cores
    expect(page.locator("#summary-figures")).to_contain_text("3 cells, 9 runs")
    page.click("#preflight-button")
    expect(page.locator("#preflight-checks")).to_contain_text("restart on mariadb-flags")
    b.shot("write-up-01-plan")

    page.click("#launch-button")
    expect(page).to_have_url(re.compile(r"/batches/\d+/$"))
    number = int(re.search(r"/batches/(\d+)/", page.url)[1])  # type: ignore[index]
    expect(page.locator("#results-link")).to_have_text("Results are ready", timeout=600_000)
    batch = Batch.objects.get(pk=number)
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))

    # the answer: three cells, two ratios against b1e1 with their intervals, and why
    page = b.open(f"/batches/{number}/results")
    rows = page.locator("#report-table tbody tr")
    expect(rows).to_have_count(3)
    for i, (label, _) in enumerate(SNIPPETS):
        expect(rows.nth(i)).to_contain_text(label)
    servers_table = page.locator("#relative")
    expect(servers_table).to_contain_text("b1e1 (baseline)")
    # b0e1 and b0e0 against b1e1: each a ratio, its 95 % interval (as a ratio range, or as
    # per cent from and to) and its verdict
    against = re.compile(
        r"(\d[\d.,]*) (\d[\d.,]*\u2013\d[\d.,]*\u00d7|[+\u2212-]?[\d.,]+ % to [+\u2212-]?[\d.,]+ %)"
        r" \u00b7 (faster|slower|no significant difference)"
    )
    row = servers_table.locator("tbody tr").first.inner_text().replace("\t", " ")
    ratios = against.findall(" ".join(row.split()))
    assert len(ratios) == 2, row
    why = page.locator("#why-panel")
    expect(why).to_contain_text(
        re.compile(r"b0e0 makes 0\.0\d redo log fsyncs per transaction against (0\.9\d|1\.0\d)")
    )
    b.shot("write-up-02-answer")
    assert b.errors == []

    # each run says what it ran on: its config read back from its server, and its version
    runs = list(batch.runs.order_by("position"))
    assert sorted(run.config for run in runs) == sorted(
        label for label, _ in SNIPPETS for _ in "123"
    )
    for run in runs:
        recorded = run.environment["config"]
        assert recorded["label"] == run.config and recorded["not_taken"] == [], recorded
        assert {k: recorded["verified"].get(k) for k in EXPECTED[run.config]} == EXPECTED[
            run.config
        ], (run.config, recorded)
        assert run.environment["server"]["version"].startswith("10."), run.environment
        assert run.environment["target"]["port"] == managed.port

    # and the server is as it was found: its own config, every watched setting
    wait_until(lambda: server_values(managed) == original, timeout=60, what="the original back")
