"""The health page while the results database is down, for a session that opened it
lately (runs/services/verified_tokens.py): the report from Redis, as plain HTML. No
template: rendering one reads the session, the user and the messages from the database.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.html import escape

from runs.services import health, verified_tokens

HEALTH_PATH = "/health"


def health_page_database_down(request: HttpRequest) -> HttpResponse | None:
    """The health page from Redis, or None when this is not the health page or its
    session was not verified lately (then the database-down page, as for every page)."""
    if request.path_info != HEALTH_PATH:
        return None
    session_key = request.COOKIES.get(settings.SESSION_COOKIE_NAME) or ""
    if not session_key or verified_tokens.recalled_session(session_key=session_key) is None:
        return None
    report = health.health_report()
    rows = []
    for p in [*report.workers, report.beat, report.sweeper, *filter(None, [report.web])]:
        state = "alive" if p.alive else "gone"
        beat = p.last_heartbeat or "never"
        queues = ", ".join(p.queues)
        rows.append(
            f"<tr><td>{escape(p.name)}</td><td>{state}</td><td>{escape(beat)}</td>"
            f"<td>{escape(queues)}</td></tr>"
        )
    problems = "".join(f"<li>{escape(p)}</li>" for p in report.problems)
    page = (
        "<!doctype html><html lang=en><meta charset=utf-8><title>benchdash: health</title>"
        "<h1>Health <small>something is wrong</small></h1>"
        f"<ul class=problems>{problems}</ul>"
        "<p>From Redis: the results database is away, so the batches and the queue are not "
        "shown.</p><table id=health-processes><thead><tr><th>Process<th>State"
        "<th>Last heartbeat (UTC)<th>Queues</thead><tbody>"
        f"{''.join(rows)}</tbody></table></html>"
    )
    return HttpResponse(page, status=503)
