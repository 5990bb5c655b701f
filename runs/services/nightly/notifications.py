"""Telling a plan's people about a night: cells alerted (a new slower step, with tonight
against the band; runs/analysis/nightly/regressions.py), or a scheduled batch that
failed, was skipped or cancelled. By email (Django's email backend) and to a webhook URL
that receives the same news as JSON, or as a Slack or Microsoft Teams message when the URL
is theirs (runs/services/nightly/webhook_bodies.py); both configured per plan.

Sending is the edge of the system: every network call has a timeout, and a recipient that
cannot be reached is recorded in Batch.notified, never raised, so that one broken webhook
cannot keep the email from going out, nor fail the task.
"""

from __future__ import annotations

import http.client
import json
import logging
import smtplib
import urllib.parse
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.mail import send_mail
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from runs.analysis.nightly import regressions
from runs.bidi import bidi_shown
from runs.columns import NightCheck
from runs.models import Alert, Batch, Plan, Status
from runs.services.links import absolute_url
from runs.services.nightly import webhook_bodies, webhooks

logger = logging.getLogger(__name__)

# Statuses of a scheduled batch that lost its night: reported whatever the figures say.
LOST_NIGHT = (Status.FAILED, Status.SKIPPED, Status.CANCELLED)
MAX_ERROR_CHARS = 300


@dataclass(frozen=True)
class News:
    event: str  # regression, regression_unconfirmed, batch_failed, batch_skipped, batch_cancelled
    subject: str
    text: str
    payload: dict[str, Any]


def batch_notify(*, batch: Batch, alert: Alert | None = None) -> list[dict[str, Any]]:
    """Send the news of a scheduled batch, once: a batch already notified is left alone.
    An alerted night is told with its alert (runs/services/nightly/alerts.py): once its re-run
    confirmed it, or could not. Returns what Batch.notified records: one entry per
    channel, sent or not."""
    news = batch_news(batch, alert)
    if news is None or batch.plan is None:
        return []
    plan = batch.plan
    with transaction.atomic():
        # The row lock makes a second delivery of the task wait, then find the record.
        locked = Batch.objects.select_for_update().only("id", "notified").get(pk=batch.pk)
        if locked.notified:
            return list(locked.notified)
        records = [*_email(plan, news), *_webhook(plan, news)]
        if not records:
            records = [_record("none", "", ok=False, error="the plan has no recipient")]
        locked.notified = records
        locked.save(update_fields=["notified"])
    batch.notified = records
    return records


def batch_news(batch: Batch, alert: Alert | None = None) -> News | None:
    """What there is to tell about a scheduled batch; None when the night went well, and
    for an alerted night without its alert confirmed (or unconfirmed)."""
    plan = batch.plan
    if plan is None:
        return None
    check = NightCheck.load(batch.analysis)
    flagged = [c for c in check.cells if c.get("flagged")]
    if batch.status in LOST_NIGHT:
        event = f"batch_{batch.status}"
        headline = f"nightly batch {batch.pk} {_lost(batch.status)}"
    elif flagged and alert is not None and alert.state != Alert.State.NOISE:
        confirmed = alert.state != Alert.State.CONFIRMING
        event = "regression" if confirmed else "regression_unconfirmed"
        headline = f"{len(flagged)} of {len(check.cells)} cells slower" + (
            ", confirmed by a re-run" if confirmed else ", could not be confirmed"
        )
    else:
        return None
    subject = f"[benchdash] {_mail_escape(plan.name)}: {headline}"
    payload = _payload(batch, plan, event, headline, flagged)
    if alert is not None:
        payload["alert"] = _alert_payload(alert)
    return News(event=event, subject=subject, text=_mail_escape(_text(payload)), payload=payload)


def _mail_escape(text: str) -> str:
    """Mail is text/plain: nothing in it renders as a link or markup, so user text needs
    only its bidirectional controls shown (a U+202E would reverse what the reader sees)."""
    return bidi_shown(text)


def _alert_payload(alert: Alert) -> dict[str, Any]:
    """The alert's evidence: what the re-run found, and what changed since the baseline."""
    confirming = alert.confirmation_id
    return {
        "id": alert.pk,
        "state": alert.state,
        "verdict": alert.verdict,
        "confirmation": {
            "batch": confirming,
            "url": absolute_url(reverse("batch_results", args=[confirming]))
            if confirming
            else None,
            "cells": [c["confirmation"] for c in alert.cells if "confirmation" in c],
        },
        "changes": list(alert.changes),
    }


def _lost(status: str) -> str:
    return {"failed": "failed", "skipped": "was skipped", "cancelled": "was cancelled"}[status]


def _payload(
    batch: Batch, plan: Plan, event: str, headline: str, flagged: list[dict[str, Any]]
) -> dict[str, Any]:
    check = NightCheck.load(batch.analysis)
    return {
        "event": event,
        "text": f"{plan.name}: {headline}",
        "plan": {
            "id": plan.pk,
            "name": plan.name,
            "url": absolute_url(reverse("plan_edit", args=[plan.pk])),
            "history_url": absolute_url(reverse("plan_history", args=[plan.pk])),
        },
        "batch": {
            "id": batch.pk,
            "status": batch.status,
            "launched_by": batch.launched_by,
            "created_at": batch.created_at,
            "started_at": batch.started_at,
            "finished_at": batch.finished_at,
            "error": batch.error,
            "url": absolute_url(reverse("batch_detail", args=[batch.pk])),
            "results_url": absolute_url(reverse("batch_results", args=[batch.pk])),
        },
        "analysis": {
            "status": check.status,
            "summary": check.summary,
            "rule": check.rule,
        },
        "flagged": [_flagged_cell(cell) for cell in flagged],
    }


def _flagged_cell(cell: dict[str, Any]) -> dict[str, Any]:
    return {
        "label": cell.get("label"),
        "threads": cell.get("threads"),
        "settings": cell.get("settings"),
        "options": cell.get("options"),
        "checks": [c for c in cell.get("checks", []) if c.get("verdict") == regressions.REGRESSION],
        "steps": [s for s in cell.get("steps", []) if s.get("alert")],
    }


def _text(payload: dict[str, Any]) -> str:
    batch, plan = payload["batch"], payload["plan"]
    lines = [payload["text"], ""]
    if batch["status"] != Status.DONE:
        lines.append(f"Batch {batch['id']} ended {batch['status']}.")
        if batch["error"]:
            lines += ["", batch["error"]]
        lines.append("")
    for cell in payload["flagged"]:
        lines.append(f"{cell['label']}:")
        for check in cell["checks"]:
            lines.append(f"  {check['text']}")
            lines.append(f"  ({check['rule']})")
        lines += [f"  {step['text']}" for step in cell["steps"]]
    if payload["flagged"]:
        lines += ["", f"Rule: {payload['analysis']['rule']['text']}.", ""]
    if "alert" in payload:
        lines += _alert_text(payload["alert"])
    lines += [
        f"Batch:   {batch['url']}",
        f"Results: {batch['results_url']}",
        f"History: {plan['history_url']}",
    ]
    return "\n".join(lines) + "\n"


def _alert_text(alert: dict[str, Any]) -> list[str]:
    changes = [c["text"] for c in alert["changes"]] or ["nothing recorded differs"]
    lines = ["Confirmation:", *(f"  {line}" for line in alert["verdict"].splitlines())]
    if alert["confirmation"]["url"]:
        lines.append(f"  {alert['confirmation']['url']}")
    return [*lines, "", "What changed since the baseline nights:", *(f"  {c}" for c in changes), ""]


# --- channels ---------------------------------------------------------------------------------


def plan_recipients(plan: Plan) -> tuple[list[str], list[str]]:
    """The plan's email addresses, one a line: (valid, invalid)."""
    valid, invalid = [], []
    for line in plan.notify_emails.splitlines():
        address = line.strip()
        if not address:
            continue
        try:
            validate_email(address)
        except DjangoValidationError:
            invalid.append(address)
        else:
            valid.append(address)
    return valid, invalid


def _email(plan: Plan, news: News) -> list[dict[str, Any]]:
    valid, invalid = plan_recipients(plan)
    records = [
        _record("email", address, ok=False, error="not an email address") for address in invalid
    ]
    if not valid:
        return records
    try:
        send_mail(
            news.subject,
            news.text,
            settings.DEFAULT_FROM_EMAIL,
            valid,
            fail_silently=False,
        )
    except (smtplib.SMTPException, OSError) as e:
        logger.warning("plan %s: email to %s failed: %s", plan.pk, valid, e)
        return [*records, _record("email", ", ".join(valid), ok=False, error=str(e))]
    return [*records, _record("email", ", ".join(valid), ok=True, subject=news.subject)]


def _webhook(plan: Plan, news: News) -> list[dict[str, Any]]:
    url = plan.notify_webhook.strip()
    if not url:
        return []
    shown = redact_url(url)
    kind = webhook_bodies.webhook_format(url)
    body = json.dumps(
        webhook_bodies.webhook_body(news.payload, format=kind), cls=DjangoJSONEncoder
    ).encode()
    try:
        status, reason = webhooks.webhook_post(
            url, body, timeout=settings.BENCHDASH_WEBHOOK_TIMEOUT
        )
    except (webhooks.WebhookError, OSError, http.client.HTTPException) as e:
        logger.warning("plan %s: webhook %s failed: %s", plan.pk, shown, e)
        return [_record("webhook", shown, ok=False, error=str(e) or type(e).__name__)]
    if not 200 <= status < 300:
        # Redirects are not followed: they could lead to an address that was not checked.
        return [_record("webhook", shown, ok=False, status=status, error=f"HTTP {status} {reason}")]
    return [_record("webhook", shown, ok=True, status=status, event=news.event, format=kind)]


def redact_url(url: str) -> str:
    """A webhook URL often carries its secret in the path or query (chat services do):
    only the scheme, host and port are recorded and shown."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    more = "/…" if parts.path.strip("/") or parts.query else "/"
    return f"{parts.scheme}://{host}{port}{more}"


def _record(channel: str, to: str, *, ok: bool, error: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "channel": channel,
        "to": to,
        "ok": ok,
        "error": error[:MAX_ERROR_CHARS],
        "at": timezone.now().isoformat(),
        **extra,
    }
