"""Who may call the API: a valid token or a logged-in browser session, nothing else."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from runs.services import tokens

METHODS = ("get", "post", "put", "patch", "delete")


def api_endpoints() -> Iterator[tuple[str, str]]:
    """(method, concrete path) for every /api/v1/ pattern, from the URL resolver."""

    def walk(patterns: list, prefix: str) -> Iterator[tuple[str, URLPattern]]:
        for p in patterns:
            route = prefix + str(p.pattern)
            if isinstance(p, URLResolver):
                yield from walk(p.url_patterns, route)
            else:
                yield route, p

    for route, pattern in walk(get_resolver().url_patterns, "/"):
        if not route.startswith("/api/v1/"):
            continue
        path = re.sub(r"<int:\w+>", "1", route)
        path = re.sub(r"<(str:)?\w+>", "abcdef", path)
        view = getattr(pattern.callback, "cls", None)
        for method in METHODS:
            if view is None or hasattr(view, method):
                yield method, path


def test_the_walk_finds_every_endpoint():
    paths = {path for _, path in api_endpoints()}
    assert len(paths) >= 18
    assert {"/api/v1/plans/1/launch", "/api/v1/runs/1/samples", "/api/v1/schema/"} <= paths


@pytest.mark.parametrize("token", [None, "wrong", "0123456789abcdef" * 4])
def test_every_endpoint_refuses_a_missing_or_wrong_token(anonymous, token):
    if token:
        anonymous.session.headers["Authorization"] = f"Token {token}"
    for method, path in api_endpoints():
        answer = anonymous.request(method, path, json={}, headers={"Accept": "application/json"})
        if path == "/api/v1/docs/":
            # The documentation page is for people: off to the login page.
            assert answer.status_code == 302, (method, path)
            assert answer.headers["Location"].startswith("/accounts/login/")
            continue
        assert answer.status_code == 401, (method, path, answer.status_code, answer.text)
        assert answer.json()["message"], (method, path)
        assert answer.headers["WWW-Authenticate"] == "Token"


def test_a_revoked_or_expired_token_is_refused(api, owner):
    text = tokens.token_create(user=owner, name="short", expires_in=timedelta(days=1))[1]
    api.session.headers["Authorization"] = f"Token {text}"
    assert api.get("/api/v1/targets").status_code == 200

    tokens.tokens_of(owner).filter(token_key=text[:15]).update(expiry="2001-01-01T00:00:00Z")
    assert api.get("/api/v1/targets").status_code == 401

    text = tokens.token_create(user=owner, name="other", expires_in=None)[1]
    api.session.headers["Authorization"] = f"Token {text}"
    assert api.delete(f"/api/v1/tokens/{text[:15]}").status_code == 204
    assert api.get("/api/v1/targets").status_code == 401


def test_the_browser_uses_its_session_with_csrf(anonymous, owner):
    anonymous.login("owner", "owner-pass-1")
    assert anonymous.get("/api/v1/targets").status_code == 200

    csrf = anonymous.session.headers.pop("X-CSRFToken")
    refused = anonymous.post("/api/v1/tokens", json={"name": "no csrf"})
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["message"]

    anonymous.session.headers["X-CSRFToken"] = csrf
    assert anonymous.post("/api/v1/tokens", json={"name": "laptop"}).status_code == 201


def test_the_documentation_page_works_offline_for_a_logged_in_user(anonymous, owner):
    anonymous.login("owner", "owner-pass-1")
    page = anonymous.get("/api/v1/docs/")

    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert any("swagger-ui-bundle.js" in a for a in assets), assets
    for asset in assets:
        assert asset.startswith("/"), f"{asset} is not served by benchdash itself"
        assert anonymous.get(asset).status_code == 200, asset
    assert "/api/v1/schema/" in page.text


def test_the_schema_is_openapi_3_and_needs_a_token(api, anonymous):
    assert anonymous.get("/api/v1/schema/").status_code == 401

    schema = api.get("/api/v1/schema/", headers={"Accept": "application/vnd.oai.openapi+json"})

    assert schema.status_code == 200
    assert schema.json()["openapi"].startswith("3.")
    assert "/api/v1/plans/{id}/launch" in schema.json()["paths"]
