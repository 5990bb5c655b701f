"""The services send tasks through Celery's current app, not the project's module: that
app must be benchdash's, with its broker, in every thread (a page's view runs in one)."""

from __future__ import annotations

import threading

from celery import current_app
from django.conf import settings


def test_every_thread_sends_through_benchdashs_app() -> None:
    seen: list[tuple[str | None, str]] = []

    def look() -> None:  # the proxy is resolved in this thread
        seen.append((current_app.main, current_app.conf.broker_url))

    thread = threading.Thread(target=look)
    thread.start()
    thread.join()

    assert seen == [("benchdash", settings.CELERY_BROKER_URL)]
