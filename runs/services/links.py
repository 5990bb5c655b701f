"""Links that leave benchdash (mails, webhooks, the downloaded report): one base URL for
all of them, BENCHDASH_BASE_URL (by default the address scripts/start serves, on
BENCHDASH_PORT). A page or an API answer links relative to the request instead."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse


def base_url() -> str:
    """BENCHDASH_BASE_URL without its trailing slash: an absolute link is it + a path."""
    return str(settings.BENCHDASH_BASE_URL).rstrip("/")


def absolute_url(path: str) -> str:
    """`path` (from the site's root, `/batches/3/results`) as a link people outside the
    browser can open: BENCHDASH_BASE_URL + path."""
    if not path.startswith("/"):
        raise ValueError(f"not a path from the site's root: {path!r}")
    return base_url() + path


def absolute_reverse(name: str, *args: Any) -> str:
    """The page named `name` (runs/web/urls.py) as an absolute link."""
    return absolute_url(reverse(name, args=args))
