"""Nightly batches on a real worker against the private MariaDB, checked against the
nights before them; the news goes to a real HTTP server on loopback and to the mailbox.

The nights are short oltp_insert runs on a data set that stays between them. Every
insert goes through a trigger that sleeps, so that throughput and latency are set by the
trigger more than by the load on this shared machine; the regression is the one a team
meets for real: someone made the trigger slower. The plan itself never changes, so every
night's cell has identical frozen parameters.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core import mail
from django.test import Client
from django.utils import timezone
from playwright.sync_api import sync_playwright

from runs.analysis.nightly import regressions
from runs.models import Batch, LaunchedBy, Plan, Status, Target
from runs.services import batches
from runs.services.nightly import check as nightly_check
from runs.services.nightly import schedules
from tests.helpers import wait_for_batch, wait_for_confirmation, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

NIGHTLY_OPTIONS = {"time": 2, "report-interval": 1, "tables": 1, "table-size": 100}
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "history"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


class Receiver:
    """An HTTP server on a free loopback port that keeps what is POSTed to it."""

    def __init__(self, status: int = 200) -> None:
        received: list[dict[str, Any]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                received.append(
                    {
                        "path": self.path,
                        "content_type": self.headers.get("Content-Type"),
                        "body": json.loads(self.rfile.read(length)),
                    }
                )
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"thanks")

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep the test output quiet

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/benchdash?token=s3cret"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def webhook() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.stop()


@pytest.fixture
def broken_webhook() -> Iterator[Receiver]:
    receiver = Receiver(status=500)
    yield receiver
    receiver.stop()


def night(plan: Plan) -> Batch:
    """One nightly batch, as beat launches it, once its check is stored."""
    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by=LaunchedBy.SCHEDULE))
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    wait_until(lambda: _fresh(batch).analysis, timeout=60, what=f"the check of batch {batch.pk}")
    return _fresh(batch)


def _fresh(batch: Batch) -> Batch:
    batch.refresh_from_db()
    return batch


def audit_trigger(mariadb_server, database: str, sleep_s: float) -> None:
    """A trigger on every insert into sbtest1 that sleeps: the figure a night measures."""
    mariadb_server.execute(
        f"DROP TRIGGER IF EXISTS `{database}`.audit",
        f"CREATE TRIGGER `{database}`.audit BEFORE INSERT ON `{database}`.sbtest1 "
        f"FOR EACH ROW SET @slept = SLEEP({sleep_s})",
    )


def test_nights_inside_the_noise_pass_and_a_slowdown_beyond_it_is_flagged_and_sent(
    celery_worker, make_plan, target, mariadb_server, webhook, django_user_model
):
    # The tables the nights insert into, prepared once and kept.
    keeper = make_plan(name="prepare sbtest", options={**NIGHTLY_OPTIONS, "time": 1}, cleanup=False)
    assert wait_for_batch(batches.batch_launch(plan=keeper)).status == Status.DONE
    audit_trigger(mariadb_server, target.database, 0.03)
    plan = make_plan(
        name="nightly inserts",
        options=NIGHTLY_OPTIONS,
        server_settings={"innodb_flush_log_at_trx_commit": ["2"]},  # no fsync wait
        dataset_policy="existing",
        # This machine is shared with other test runs, whose load moves p95 by tens of
        # percent from run to run (+51 % once in a whole run: 40 % was too tight); a quiet
        # benchmark host keeps the default 5 %. The slow night below is five-fold.
        regression_threshold_pct=60,
        notify_webhook=webhook.url,
        notify_emails="dba@example.com\n\nnot-an-address\n",
    )

    # Fewer than five earlier nights: no verdict, nobody told.
    for earlier in range(5):
        batch = night(plan)
        assert batch.analysis["status"] == regressions.NOT_ENOUGH
        (cell,) = batch.analysis["cells"]
        assert cell["label"] == "threads=1 flush=2"
        assert [c["text"] for c in cell["checks"]] == [
            f"not enough history: {earlier} of 5 nights"
        ] * 2
        assert batch.notified == []

    # A sixth night like the others: within the noise.
    steady = night(plan)
    (cell,) = steady.analysis["cells"]
    tps_check, latency_check = cell["checks"]
    assert steady.analysis["status"] == regressions.STEADY, cell
    assert not cell["flagged"]
    assert tps_check["nights"] == 5 and tps_check["baseline"] > 0
    assert abs(tps_check["change_pct"]) <= tps_check["limit_pct"]
    assert tps_check["limit_pct"] == max(60, 3 * tps_check["noise_pct"])
    assert latency_check["name"] == "p95"
    assert steady.notified == [] and webhook.received == [] and mail.outbox == []

    # Someone makes the trigger five times as slow: the seventh night is flagged and sent.
    # Five-fold, not three: a step that stands out of any load on a shared 2-core machine.
    audit_trigger(mariadb_server, target.database, 0.15)
    slow = night(plan)
    # Told once its re-run confirmed it, by the time the product promises for that, then
    # within the webhook's own timeout (the mail is written first, to a file).
    wait_for_confirmation(slow)
    told = settings.BENCHDASH_WEBHOOK_TIMEOUT + 5
    wait_until(lambda: _fresh(slow).notified, timeout=told, what="the news of the slow night")
    slow.refresh_from_db()
    (cell,) = slow.analysis["cells"]
    tps_check = cell["checks"][0]
    assert slow.analysis["status"] == regressions.REGRESSION
    assert cell["flagged"] and tps_check["verdict"] == regressions.REGRESSION
    assert tps_check["nights"] == 6
    assert tps_check["change_pct"] < -tps_check["limit_pct"]
    assert re.fullmatch(
        r"tps [0-9.,]+ vs baseline [0-9.,]+ \(\u2212[0-9]+ %\), noise \u00b1[0-9.]+ %",
        tps_check["text"],
    ), tps_check["text"]
    assert "max(60 %, 3 \u00d7 noise" in tps_check["rule"]

    # The webhook got the news as JSON, with the figures and absolute links.
    (hook,) = webhook.received
    assert hook["content_type"] == "application/json"
    assert hook["path"] == "/hooks/benchdash?token=s3cret"
    news = hook["body"]
    assert news["event"] == "regression"
    assert news["plan"]["name"] == "nightly inserts"
    assert news["batch"]["id"] == slow.pk and news["batch"]["status"] == "done"
    assert news["batch"]["results_url"] == (
        f"{settings.BENCHDASH_BASE_URL}/batches/{slow.pk}/results"
    )
    assert news["plan"]["history_url"] == f"{settings.BENCHDASH_BASE_URL}/plans/{plan.pk}/history"
    (flagged,) = news["flagged"]
    assert flagged["label"] == "threads=1 flush=2"
    assert flagged["settings"] == {"innodb_flush_log_at_trx_commit": "2"}
    assert flagged["checks"][0]["text"] == tps_check["text"]
    assert news["analysis"]["rule"]["threshold_pct"] == 60

    # And the mail, to the one valid address.
    (message,) = mail.outbox
    assert message.to == ["dba@example.com"]
    assert message.subject == (
        "[benchdash] nightly inserts: 1 of 1 cells slower, confirmed by a re-run"
    )
    assert tps_check["text"] in message.body
    assert f"/batches/{slow.pk}/results" in message.body

    # What was sent is recorded; the webhook's secret is not.
    sent = {(r["channel"], r["to"]): r for r in slow.notified}
    assert sent[("email", "dba@example.com")]["ok"]
    assert sent[("email", "not-an-address")]["error"] == "not an email address"
    webhook_record = sent[("webhook", f"http://127.0.0.1:{webhook.server.server_port}/…")]
    assert webhook_record["ok"] and webhook_record["status"] == 200
    assert "s3cret" not in json.dumps(slow.notified)

    # The history page shows the seven nights and flags the last one.
    client = Client()
    client.force_login(django_user_model.objects.create_user("dba", password="dba-pass-123"))
    page = client.get(f"/plans/{plan.pk}/history")
    assert page.status_code == 200
    html = page.content.decode()
    assert tps_check["text"] in html
    data = json.loads(
        html.split('<script id="history-data" type="application/json">')[1].split("</script>")[0]
    )
    assert [n["batch"] for n in data["nights"]][-2:] == [steady.pk, slow.pk]
    (series,) = data["cells"]
    assert series["flags"][:-1] == [None] * 6 and tps_check["text"] in series["flags"][-1]
    assert series["throughput"][-1] < series["throughput"][-2]


def test_a_failed_nightly_batch_is_reported(celery_worker, local_host, webhook, free_port):
    gone = Target.objects.create(
        name="decommissioned", host="127.0.0.1", port=free_port, database="sbtest", user="bench"
    )
    plan = Plan.objects.create(
        name="nightly on a server that is gone",
        target=gone,
        load_host=local_host,
        test="oltp_insert",
        options=NIGHTLY_OPTIONS,
        threads=[1],
        notify_webhook=webhook.url,
        notify_emails="dba@example.com",
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by=LaunchedBy.SCHEDULE))
    assert batch.status == Status.FAILED
    wait_until(lambda: _fresh(batch).notified, timeout=60, what="the news of the failed night")

    (hook,) = webhook.received
    news = hook["body"]
    assert news["event"] == "batch_failed"
    assert news["batch"]["status"] == "failed"
    assert news["batch"]["error"] == batch.error and "preflight failed" in batch.error
    assert news["flagged"] == []
    (message,) = mail.outbox
    assert message.subject == f"[benchdash] {plan.name}: nightly batch {batch.pk} failed"
    assert batch.error.splitlines()[0] in message.body


def test_a_skipped_nightly_launch_is_reported(celery_worker, make_plan, webhook):
    plan = make_plan(notify_webhook=webhook.url)
    running = batches.batch_launch(plan=plan)  # a user's batch, still queued or running

    skipped = schedules.plan_launch_scheduled(plan_id=plan.pk)

    assert skipped is not None and skipped.status == Status.SKIPPED
    wait_until(lambda: _fresh(skipped).notified, timeout=120, what="the news of the skipped fire")
    (hook,) = webhook.received
    assert hook["body"]["event"] == "batch_skipped"
    assert (
        hook["body"]["batch"]["error"]
        == f"skipped: batch {running.pk} of this plan is still running"
    )
    # The user's own batch is not a night: it is neither checked nor reported.
    assert wait_for_batch(running).analysis == {}


def test_a_failing_webhook_is_recorded_not_raised(db, local_host, broken_webhook, free_port):
    plan = Plan.objects.create(
        name="nightly with a broken hook",
        load_host=local_host,
        test="cpu",
        threads=[1],
        notify_webhook=broken_webhook.url,
        notify_emails="dba@example.com",
    )
    fired = schedules.batch_record_unlaunched(
        plan=plan,
        status=Status.FAILED,
        error="not launched: threads: too many",
        fired_at=timezone.now(),
    )

    nightly_check.batch_analyse(batch=fired)

    fired.refresh_from_db()
    email, hook = fired.notified
    assert email["channel"] == "email" and email["ok"]
    assert hook == {**hook, "channel": "webhook", "ok": False, "status": 500}
    assert hook["error"] == "HTTP 500 Internal Server Error"
    assert len(broken_webhook.received) == 1

    # Asked again (a redelivered task): the news is not sent twice.
    nightly_check.batch_analyse(batch=fired)
    assert len(mail.outbox) == 1 and len(broken_webhook.received) == 1

    # Nobody listening, or a scheme that is not HTTP: recorded too.
    for url, error in [
        (f"http://127.0.0.1:{free_port}/hook", "Connection refused"),
        ("file:///etc/passwd", "file scheme: http(s) only"),
    ]:
        plan.notify_webhook = url
        plan.save()
        again = schedules.batch_record_unlaunched(
            plan=plan, status=Status.FAILED, error="not launched", fired_at=timezone.now()
        )
        nightly_check.batch_analyse(batch=again)
        again.refresh_from_db()
        assert error in again.notified[-1]["error"], again.notified


def test_the_history_page_draws_a_chart_per_cell_without_a_script_error(
    celery_worker, local_host, asgi_server, session_cookie, monkeypatch
):
    plan = Plan.objects.create(
        name="nightly cpu",
        target=None,
        load_host=local_host,
        test="cpu",
        options={"time": 0, "events": 20, "report-interval": 0},
        threads=[1, 2],
    )
    for _ in range(3):
        wait_for_batch(batches.batch_launch(plan=plan, launched_by=LaunchedBy.SCHEDULE))
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop, this thread
    errors: list[str] = []

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = chromium.new_context(viewport={"width": 1400, "height": 900})
        context.add_cookies(
            [{"name": "sessionid", "value": session_cookie["sessionid"], "url": asgi_server.url}]
        )
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{asgi_server.url}/plans/{plan.pk}/history")
        page.wait_for_load_state("networkidle")
        points = page.evaluate(
            """async () => { const { Chart } = await import("chart.js");
                   return [...document.querySelectorAll('#history-charts canvas')]
                   .map((c) => Chart.getChart(c).data.datasets[0].data.length); }"""
        )
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "plan_history.png"), full_page=True)
        context.close()
        chromium.close()

    assert errors == []
    assert points == [3, 3]
