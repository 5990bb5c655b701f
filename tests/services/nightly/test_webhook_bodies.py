"""The news in Slack's and Microsoft Teams' incoming-webhook formats: the format read from
the URL, the bodies against each format's documented shape (Slack: a `text` fallback and
Block Kit `blocks`, sections in mrkdwn; Teams: a `message` with one Adaptive Card
attachment), and posted to a real HTTP server on loopback by the nightly check."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.core import mail
from django.utils import timezone

from runs.models import LoadHost, Plan, Status
from runs.services.nightly import check as nightly_check
from runs.services.nightly import schedules
from runs.services.nightly.webhook_bodies import (
    JSON,
    SLACK,
    TEAMS,
    slack_body,
    teams_body,
    webhook_body,
    webhook_format,
)
from tests.services.nightly.test_history import Receiver

BASE = "https://bench.example.com"
STEP_TEXT = (
    "tps stepped slower: 10,050 to 8,210 (\u221218 %, 95 % interval \u221219 % to \u221217 %)"
)

RLO = "\u202e"  # right-to-left override: "gnp.exe" would read "exe.png"
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f]")


def news(status="done", flagged=None, error=""):
    """A payload as notifications.batch_news builds it."""
    return {
        "event": "regression" if status == "done" else f"batch_{status}",
        "text": "nightly inserts: 1 of 2 cells slower",
        "plan": {
            "id": 3,
            "name": "nightly inserts",
            "url": f"{BASE}/plans/3/",
            "history_url": f"{BASE}/plans/3/history",
        },
        "batch": {
            "id": 41,
            "status": status,
            "error": error,
            "url": f"{BASE}/batches/41/",
            "results_url": f"{BASE}/batches/41/results",
        },
        "analysis": {"status": "regression", "summary": "1 of 2 cells regressed", "rule": {}},
        "flagged": flagged
        if flagged is not None
        else [
            {
                "label": "threads=4 flush=<2>",
                "checks": [
                    {"text": "tps 8,210 vs baseline 10,050 (\u221218 %), noise \u00b10.4 %"}
                ],
                "steps": [{"text": STEP_TEXT}],
            }
        ],
    }


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://hooks.slack.com/services/T000/B000/XXXX", SLACK),
        ("https://contoso.webhook.office.com/webhookb2/abc@def/IncomingWebhook/x/y", TEAMS),
        ("https://outlook.office.com/webhook/abc/IncomingWebhook/x/y", TEAMS),
        ("https://hooks.example.com/benchdash?token=s3cret", JSON),
        ("https://hooks.slack.com.evil.example/services/x", JSON),
        ("https://webhook.office.com.evil.example/x", JSON),
        ("http://127.0.0.1:8080/relay#slack", SLACK),
        ("http://127.0.0.1:8080/relay#Teams", TEAMS),
        ("https://hooks.slack.com/services/x#json", JSON),
    ],
)
def test_the_format_is_read_from_the_url(url, kind):
    assert webhook_format(url) == kind


def test_the_plain_json_is_the_payload_itself():
    payload = news()
    assert webhook_body(payload, format=JSON) is payload


def test_slack_gets_a_fallback_text_and_mrkdwn_sections():
    body = slack_body(news())

    assert set(body) == {"text", "blocks"}
    assert body["text"] == "nightly inserts: 1 of 2 cells slower"
    header, cell, links = body["blocks"]
    assert header == {
        "type": "header",
        "text": {"type": "plain_text", "text": "nightly inserts: 1 of 2 cells slower"},
    }
    assert cell["type"] == "section" and cell["text"]["type"] == "mrkdwn"
    # Slack's markup characters are escaped; the figures and the step are there.
    assert cell["text"]["text"] == (
        "*threads=4 flush=&lt;2&gt;*\n"
        "\u2022 tps 8,210 vs baseline 10,050 (\u221218 %), noise \u00b10.4 %\n"
        f"\u2022 {STEP_TEXT}"
    )
    assert links["text"] == {
        "type": "mrkdwn",
        "text": f"<{BASE}/batches/41/results|Results> \u00b7 <{BASE}/batches/41/|Batch 41> "
        f"\u00b7 <{BASE}/plans/3/history|History>",
    }


def test_slacks_fallback_text_is_escaped_as_its_sections_are():
    payload = {**news(), "text": f"<!channel> *{RLO}gnp.exe*: 1 of 2 cells slower"}

    fallback = slack_body(payload)["text"]

    assert fallback == "&lt;!channel&gt; \u200b*[U+202E]gnp.exe\u200b*: 1 of 2 cells slower"


def test_slack_sections_stay_within_slacks_limit_and_cells_are_capped():
    many = [
        {"label": f"threads={n}", "checks": [{"text": "x" * 4000}], "steps": []} for n in range(30)
    ]
    body = slack_body(news(flagged=many))

    sections = [b for b in body["blocks"] if b["type"] == "section"]
    assert all(len(s["text"]["text"]) <= 3000 for s in sections)
    assert len(body["blocks"]) == 1 + 20 + 1 + 1  # header, 20 cells, "and 10 more", links
    assert sections[-2]["text"]["text"] == "*and 10 more cells*"


def test_a_lost_night_says_how_it_ended_in_both_formats():
    lost = news(status="failed", flagged=[], error="preflight failed: connection refused")

    _, ended, _ = slack_body(lost)["blocks"]
    assert (
        ended["text"]["text"]
        == "*Batch 41 ended failed*\n\u2022 preflight failed: connection refused"
    )
    card = teams_body(lost)["attachments"][0]["content"]
    assert [b["text"] for b in card["body"][1:]] == [
        "Batch 41 ended failed",
        "preflight failed: connection refused",
    ]


def test_teams_gets_one_adaptive_card_attachment():
    body = teams_body(news())

    assert body["type"] == "message"
    (attachment,) = body["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert attachment["contentUrl"] is None
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard"
    assert card["$schema"] == "http://adaptivecards.io/schemas/adaptive-card.json"
    assert card["version"] == "1.2"
    assert all(block["type"] == "TextBlock" and block["wrap"] for block in card["body"])
    assert [b["text"] for b in card["body"]] == [
        "nightly inserts: 1 of 2 cells slower",
        "threads=4 flush=<2>",
        "tps 8,210 vs baseline 10,050 (\u221218 %), noise \u00b10.4 %",
        STEP_TEXT,
    ]
    assert card["body"][0]["weight"] == "Bolder"
    assert card["actions"] == [
        {"type": "Action.OpenUrl", "title": "Results", "url": f"{BASE}/batches/41/results"},
        {"type": "Action.OpenUrl", "title": "Batch 41", "url": f"{BASE}/batches/41/"},
        {"type": "Action.OpenUrl", "title": "History", "url": f"{BASE}/plans/3/history"},
    ]


# --- sent by the nightly check ------------------------------------------------------------------


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    listening = Receiver()
    yield listening
    listening.stop()


@pytest.mark.parametrize("kind", [SLACK, TEAMS, JSON])
def test_a_lost_night_is_posted_in_the_format_the_url_says(db, receiver, kind):
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name="nightly cpu",
        load_host=local,
        test="cpu",
        threads=[1],
        notify_webhook=f"{receiver.url}#{kind}",
    )
    fired = schedules.batch_record_unlaunched(
        plan=plan,
        status=Status.FAILED,
        error="not launched: threads: too many",
        fired_at=timezone.now(),
    )

    nightly_check.batch_analyse(batch=fired)

    (sent,) = receiver.received
    assert sent["content_type"] == "application/json"
    assert sent["path"] == "/hooks/benchdash?token=s3cret"  # the fragment stays here
    body = sent["body"]
    if kind == SLACK:
        assert set(body) == {"text", "blocks"}
        assert body["text"] == f"nightly cpu: nightly batch {fired.pk} failed"
        assert body["blocks"][1]["text"]["text"] == (
            f"*Batch {fired.pk} ended failed*\n\u2022 not launched: threads: too many"
        )
    elif kind == TEAMS:
        card = body["attachments"][0]["content"]
        assert body["type"] == "message" and card["type"] == "AdaptiveCard"
        assert card["body"][0]["text"] == f"nightly cpu: nightly batch {fired.pk} failed"
    else:
        assert body["event"] == "batch_failed" and body["batch"]["id"] == fired.pk
    fired.refresh_from_db()
    (record,) = fired.notified
    assert record["ok"] and record["format"] == kind


def test_a_confirmed_alert_brings_its_rerun_and_what_changed_in_both_formats():
    confirmed = {
        **news(),
        "alert": {
            "id": 7,
            "state": "confirmed",
            "verdict": "threads=4 flush=<2>: tps re-run 8,190 (\u221218 %): confirmed",
            "confirmation": {"batch": 42, "url": f"{BASE}/batches/42/results", "cells": []},
            "changes": [{"kind": "variable", "text": "sync_binlog: 0 \u2192 1"}],
        },
    }

    _, _, rerun, changed, _ = slack_body(confirmed)["blocks"]
    assert rerun["text"]["text"] == (
        "*Confirmation*\n\u2022 threads=4 flush=&lt;2&gt;: tps re-run 8,190 (\u221218 %): confirmed"
    )
    assert changed["text"]["text"] == "*What changed*\n\u2022 sync_binlog: 0 \u2192 1"
    card = teams_body(confirmed)["attachments"][0]["content"]
    texts = [b.get("text") for b in card["body"]]
    assert "What changed" in texts and "sync_binlog: 0 \u2192 1" in texts


EVIL = "[x](https://evil.example/)"


def evil_news(status="done") -> dict:
    """A plan named and a cell labelled with a Markdown link, an error that tries to leave
    its code fence."""
    payload = news(
        status,
        flagged=[{"label": f"threads=4 {EVIL}", "checks": [],
                  "steps": [{"text": f"*bold* _it_ ~gone~ {EVIL}"}]}],
        error=f"boom\n```\n{EVIL}\n",
    )  # fmt: skip
    payload["text"] = f"{EVIL}: 1 of 2 cells slower"
    payload["plan"]["name"] = EVIL
    return payload


def _texts(body: object) -> list[str]:
    """Every string in a body, wherever the format puts it."""
    if isinstance(body, dict):
        return [t for value in body.values() for t in _texts(value)]
    if isinstance(body, list):
        return [t for value in body for t in _texts(value)]
    return [body] if isinstance(body, str) else []


@pytest.mark.parametrize("status", ["done", "failed"])
def test_a_label_with_markdown_is_text_in_every_format(status):
    teams = teams_body(evil_news(status))["attachments"][0]["content"]["body"]
    slack = slack_body(evil_news(status))["blocks"]
    mrkdwn = [b["text"]["text"] for b in slack if b["text"]["type"] == "mrkdwn"]

    for text in _texts(teams):
        assert "[x](" not in text  # escaped: "\[x\](https…", shown as typed
    assert any("\\[x\\](https://evil.example/)" in text for text in _texts(teams))
    for text in mrkdwn:
        assert "*bold*" not in text and "_it_" not in text and "~gone~" not in text
    # JSON carries the raw text: its receiver renders it.
    assert webhook_body(evil_news(status), format=JSON)["text"].startswith(EVIL)


def test_bidi_controls_are_shown_in_chat_messages():
    payload = news(flagged=[{"label": "night \u202egnp.exe", "checks": [], "steps": []}])
    for body in (teams_body(payload), slack_body(payload)):
        texts = _texts(body)
        assert not any("\u202e" in text for text in texts)
        assert any("[U+202E]gnp.exe" in text for text in texts)


@pytest.mark.parametrize("kind", [SLACK, TEAMS])
def test_a_plan_named_with_bidi_controls_is_told_with_them_shown_in_chat_and_mail(
    db, receiver, kind
):
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name=f"nightly {RLO}gnp.exe",
        load_host=local,
        test="cpu",
        threads=[1],
        notify_webhook=f"{receiver.url}#{kind}",
        notify_emails="dba@example.com",
    )
    fired = schedules.batch_record_unlaunched(
        plan=plan,
        status=Status.FAILED,
        error=f"not launched: target {RLO}lqs.ym\u2066 is away\u2069",
        fired_at=timezone.now(),
    )

    nightly_check.batch_analyse(batch=fired)

    (sent,) = receiver.received
    texts = _texts(sent["body"])
    assert not [text for text in texts if BIDI.search(text)]
    told = "\n".join(texts)
    headline = f"nightly [U+202E]gnp.exe: nightly batch {fired.pk} failed"
    assert headline in told
    assert "[U+202E]lqs.ym[U+2066] is away[U+2069]" in told
    if kind == SLACK:  # the preview a notification shows
        assert sent["body"]["text"] == headline
    (message,) = mail.outbox
    assert message.subject == f"[benchdash] {headline}"
    assert "[U+202E]lqs.ym[U+2066] is away[U+2069]" in message.body
    assert not BIDI.search(message.subject + message.body)
