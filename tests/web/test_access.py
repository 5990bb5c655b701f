"""Every page needs a login: walking every URL pattern, none answers an anonymous visitor
with anything but the way to the login page (or the API's 401/403)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

# The ways in and out, open by design.
OPEN = {
    "login",
    "logout",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
    "admin:login",
}
SAMPLE_ARGS = {"int": "1", "str": "abc", "path": "a/b", "slug": "abc", "uuid": "0" * 32}


def patterns(
    resolver: URLResolver, prefix: str = "", namespace: str = ""
) -> Iterator[tuple[str, str]]:
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from patterns(entry, prefix + str(entry.pattern), ns)
        elif isinstance(entry, URLPattern):
            yield f"{namespace}{entry.name or ''}", prefix + str(entry.pattern)


def example_url(pattern: str) -> str:
    """A URL matching a route or a regex, with sample values for its parameters."""
    import re

    url = re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE_ARGS.get(m[1] or "str", "abc"), pattern)
    if url.startswith("^") or "(?P<" in url or "$" in url:  # a regex pattern (admin's)
        url = re.sub(r"\(\?P<\w+>[^)]*\)", "1", url)
        url = url.replace("^", "").replace("$", "").replace("\\", "").replace("?", "")
        url = re.sub(r"\(.*?\)", "x", url)
    return "/" + url


def anonymous_is_refused(response) -> bool:
    if response.status_code in (401, 403):
        return True
    location = response.headers.get("Location", "")
    return response.status_code == 302 and "login" in location


@pytest.mark.django_db
def test_no_url_pattern_is_open_to_an_anonymous_visitor():
    client = Client()
    walked = []
    for name, pattern in patterns(get_resolver()):
        if name in OPEN:
            continue
        url = example_url(pattern)
        for method in ("get", "post"):
            response = getattr(client, method)(url)
            assert anonymous_is_refused(response), (
                f"{method.upper()} {url} ({name}) answered {response.status_code}"
            )
        walked.append(url)
    assert len(walked) > 40
    assert "/batches/1/results" in walked and "/plans/check" in walked and "/import" in walked


def test_the_walk_covers_the_pages():
    names = {name for name, _ in patterns(get_resolver())}
    for page in (
        "home",
        "targets",
        "load_hosts",
        "plans",
        "schedules",
        "import",
        "tokens",
        "compare",
        "batch_results",
        "batch_export_csv",
        "run_events",
    ):
        assert page in names
