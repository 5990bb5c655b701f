"""A night's news as each kind of webhook wants it: benchdash's own JSON, a Slack incoming
webhook's message, or a Microsoft Teams incoming webhook's Adaptive Card.

The format is read from the URL, so that a plan needs no setting for it: hooks.slack.com is
Slack; *.webhook.office.com and outlook.office.com are Teams; anything else gets the plain
JSON. A fragment says it outright (`#slack`, `#teams`, `#json`), for a relay or a chat
server of one's own: browsers and HTTP clients never send the fragment, so the receiver
sees the URL without it.

Pure functions of the payload notifications.py builds (runs/services/nightly/notifications.py).
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from runs.bidi import bidi_shown

JSON, SLACK, TEAMS = "json", "slack", "teams"
FORMATS = (JSON, SLACK, TEAMS)

SLACK_SECTION_CHARS = 3000  # Slack's limit for a section's text
MAX_CELLS_SHOWN = 20  # chat messages stay short: the rest is one line and a link
ADAPTIVE_CARD_VERSION = "1.2"


def webhook_format(url: str) -> str:
    """json, slack or teams, from the URL's fragment or else its host."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.fragment.lower() in FORMATS:
        return parts.fragment.lower()
    host = (parts.hostname or "").lower()
    if host == "hooks.slack.com":
        return SLACK
    if host == "outlook.office.com" or host.endswith(".webhook.office.com"):
        return TEAMS
    return JSON


def webhook_body(payload: dict[str, Any], *, format: str) -> dict[str, Any]:
    """The body to POST for a format."""
    if format == SLACK:
        return slack_body(payload)
    if format == TEAMS:
        return teams_body(payload)
    return payload


# --- what the news says, format aside ----------------------------------------------------------


def _lines(payload: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The news as (heading, lines): a lost night's error, or each alerted cell's steps."""
    batch = payload["batch"]
    if batch["status"] != "done":
        return [(f"Batch {batch['id']} ended {batch['status']}", [batch.get("error") or ""])]
    cells = payload["flagged"]
    told = [
        (
            cell["label"],
            [c["text"] for c in cell.get("checks", [])]
            + [s["text"] for s in cell.get("steps", [])],
        )
        for cell in cells[:MAX_CELLS_SHOWN]
    ]
    if len(cells) > MAX_CELLS_SHOWN:
        told.append((f"and {len(cells) - MAX_CELLS_SHOWN} more cells", []))
    if "alert" in payload:  # the re-run's evidence, and what changed since the baseline
        alert = payload["alert"]
        told.append(("Confirmation", alert["verdict"].splitlines()))
        changes = [c["text"] for c in alert["changes"]] or ["nothing recorded differs"]
        told.append(("What changed", changes[:MAX_CELLS_SHOWN]))
    return told


def _links(payload: dict[str, Any]) -> list[tuple[str, str]]:
    batch, plan = payload["batch"], payload["plan"]
    return [
        ("Results", batch["results_url"]),
        (f"Batch {batch['id']}", batch["url"]),
        ("History", plan["history_url"]),
    ]


# --- Slack --------------------------------------------------------------------------------------


def slack_body(payload: dict[str, Any]) -> dict[str, Any]:
    """{"text": the notification's fallback, "blocks": a header, mrkdwn sections, links}."""
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": bidi_shown(payload["text"])[:150]},
        }
    ]
    for heading, lines in _lines(payload):
        text = f"*{_slack_escape(heading)}*" + "".join(
            f"\n• {_slack_escape(line)}" for line in lines if line
        )
        blocks.append(_slack_section(text))
    links = " · ".join(f"<{url}|{_slack_escape(name)}>" for name, url in _links(payload))
    blocks.append(_slack_section(links))
    # The fallback is what a notification's preview shows: mrkdwn, like a section.
    return {"text": _slack_escape(payload["text"]), "blocks": blocks}


def _slack_section(text: str) -> dict[str, Any]:
    if len(text) > SLACK_SECTION_CHARS:
        text = text[: SLACK_SECTION_CHARS - 1] + "…"
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _slack_escape(text: str) -> str:
    """User text as mrkdwn text. &, < and > are markup to Slack (<!channel> would ping
    everyone, <url|text> is a link). Slack has no escape for *bold*, _italic_, ~strike~
    and `code`: a zero-width space before each of these characters keeps it from opening
    or closing a span, and the text reads the same."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return bidi_shown(_SLACK_FORMATTING.sub(lambda m: "\u200b" + m.group(0), text))


# Only where a span can open or close: at the edge of a word. Inside a word (sync_binlog)
# Slack formats nothing, and a name stays as it is typed, for copying.
_SLACK_FORMATTING = re.compile(r"(?<![A-Za-z0-9])([*_~`])|([*_~`])(?![A-Za-z0-9])")


# --- Microsoft Teams ----------------------------------------------------------------------------


def teams_body(payload: dict[str, Any]) -> dict[str, Any]:
    """A message with one Adaptive Card attachment: a title, a block per cell, link actions."""
    body: list[dict[str, Any]] = [
        {
            "type": "TextBlock",
            "text": _teams_escape(payload["text"]),
            "weight": "Bolder",
            "size": "Medium",
            "wrap": True,
        }
    ]
    for heading, lines in _lines(payload):
        body.append(
            {"type": "TextBlock", "text": _teams_escape(heading), "weight": "Bolder", "wrap": True}
        )
        body += [
            {"type": "TextBlock", "text": _teams_escape(line), "wrap": True}
            for line in lines
            if line
        ]
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": ADAPTIVE_CARD_VERSION,
        "body": body,
        "actions": [
            {"type": "Action.OpenUrl", "title": name, "url": url} for name, url in _links(payload)
        ],
    }
    return {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": card,
            }
        ],
    }


# A TextBlock renders Markdown: a backslash before its punctuation keeps user text text (a
# label "[x](url)" is not a link, "*" not bold). Links are only the card's own actions.
# A "#", "-" or "+" starting the text would make a heading or a list of it.
# A TextBlock renders a Markdown subset without HTML: < and > are text already, and so is
# an underscore inside a word (CommonMark), which keeps names such as sync_binlog as typed.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_LINE_START = re.compile(r"^([#+\-])")


def _teams_escape(text: str) -> str:
    """User text as a TextBlock's Markdown text."""
    escaped = _LINE_START.sub(r"\\\1", _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), text))
    return bidi_shown(escaped)
