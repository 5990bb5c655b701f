"""Webhooks go to public addresses only: a host that resolves to loopback, link-local
(the cloud's metadata service), private or reserved addresses is refused when the plan is
saved and again when the news is sent, unless BENCHDASH_WEBHOOK_ALLOW_PRIVATE allows it.
A real listener on loopback shows that nothing reaches it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from runs.errors import InvalidInput
from runs.models import LoadHost, Plan, Status
from runs.services import definitions
from runs.services.nightly import notifications, schedules, webhooks
from tests.services.nightly.test_history import Receiver


@pytest.fixture
def listener() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.stop()


@pytest.fixture
def refuse_private(settings):
    settings.BENCHDASH_WEBHOOK_ALLOW_PRIVATE = False


@pytest.fixture
def plan(db) -> Plan:
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    return Plan(name="nightly", load_host=local, test="cpu", threads=[1])


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1:{port}/hook", "loopback"),
        ("http://localhost:{port}/hook", "loopback"),  # after DNS resolution
        ("http://[::1]:{port}/hook", "loopback"),
        ("http://[::ffff:127.0.0.1]:{port}/hook", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("https://10.1.2.3/hook", "private"),
        ("http://192.168.0.10/hook", "private"),
        ("http://0.0.0.0:{port}/", "unspecified"),
        ("http://100.64.0.1/", "non-public"),
        # IPv6 addresses that carry an IPv4 one: judged by the address they lead to.
        ("http://[2002:7f00:1::]/", "loopback"),  # 6to4 of 127.0.0.1
        ("http://[2002:a01:203::1]/", "private"),  # 6to4 of 10.1.2.3
        ("http://[64:ff9b::7f00:1]/", "loopback"),  # NAT64 of 127.0.0.1
        ("http://[64:ff9b::a9fe:a9fe]/", "link-local"),  # NAT64 of 169.254.169.254
        ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "loopback"),  # Teredo, 127.0.0.1
    ],
)
def test_a_webhook_to_a_non_public_address_is_refused_at_save(
    refuse_private, plan, listener, url, kind
):
    plan.notify_webhook = url.format(port=listener.server.server_port)
    with pytest.raises(InvalidInput) as refused:
        definitions.plan_save(plan=plan)
    assert refused.value.field == "notify_webhook"
    assert f"{kind} address: webhooks go to public addresses only" in refused.value.message
    assert "BENCHDASH_WEBHOOK_ALLOW_PRIVATE" in refused.value.message
    assert plan.pk is None and listener.received == []


def test_a_name_that_does_not_resolve_is_refused_at_save(refuse_private, plan):
    plan.notify_webhook = "https://no-such-host.invalid/hook"
    with pytest.raises(InvalidInput, match="does not resolve"):
        definitions.plan_save(plan=plan)


def test_a_non_public_webhook_stored_earlier_is_refused_at_send(refuse_private, plan, listener):
    plan.notify_webhook = listener.url
    plan.save()  # stored before the rule, or while an administrator allowed it
    fired = schedules.batch_record_unlaunched(
        plan=plan, status=Status.FAILED, error="not launched", fired_at=timezone.now()
    )

    (record,) = notifications.batch_notify(batch=fired)

    assert record["channel"] == "webhook" and record["ok"] is False
    assert "is a loopback address" in record["error"]
    assert listener.received == []


def test_an_administrator_may_allow_private_addresses(settings, plan, listener):
    settings.BENCHDASH_WEBHOOK_ALLOW_PRIVATE = True
    plan.notify_webhook = listener.url
    definitions.plan_save(plan=plan)
    fired = schedules.batch_record_unlaunched(
        plan=plan, status=Status.FAILED, error="not launched", fired_at=timezone.now()
    )

    (record,) = notifications.batch_notify(batch=fired)

    assert record["ok"] and record["status"] == 200
    (hook,) = listener.received
    assert hook["path"] == "/hooks/benchdash?token=s3cret"
    assert hook["body"]["batch"]["id"] == fired.pk


def test_a_redirect_is_not_followed(settings, listener):
    settings.BENCHDASH_WEBHOOK_ALLOW_PRIVATE = True
    redirects: list[str] = []

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            redirects.append(self.path)
            self.send_response(307)
            self.send_header("Location", listener.url)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/hook"
        status, _ = webhooks.webhook_post(url, b"{}", timeout=5)
    finally:
        server.shutdown()
        server.server_close()
    assert status == 307 and redirects == ["/hook"]
    assert listener.received == []
