"""Fixtures for the API tests: the live server, named users with tokens, and an HTTP client
that keeps every response body so a test can look for secrets that must never come back."""

from __future__ import annotations

import re
from typing import Any

import pytest
import requests

from runs.models import Target
from runs.services import tokens


class Api:
    """requests against the live server, authenticated with a token (or not)."""

    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base_url = base_url
        self.session = requests.Session()
        if token:
            self.session.headers["Authorization"] = f"Token {token}"
        self.bodies: list[str] = []

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        url = path if path.startswith("http") else self.base_url + path
        response = self.session.request(method, url, timeout=30, allow_redirects=False, **kwargs)
        self.bodies.append(response.text)
        return response

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("PUT", path, **kwargs)

    def patch(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("PATCH", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("DELETE", path, **kwargs)

    def login(self, username: str, password: str) -> None:
        """Log in through the login page, as a browser does (session and CSRF cookies)."""
        page = self.get("/accounts/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert csrf, page.text[:500]
        answer = self.post(
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": csrf[1]},
            headers={"Referer": self.base_url + "/accounts/login/"},
        )
        assert answer.status_code == 302, answer.text[:500]
        csrf_cookie = self.session.cookies.get("csrftoken")
        assert csrf_cookie
        self.session.headers["X-CSRFToken"] = csrf_cookie

    def all_pages(self, path: str) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        next_url: str | None = path
        while next_url:
            page = self.get(next_url)
            assert page.status_code == 200, page.text
            results += page.json()["results"]
            next_url = page.json()["next"]
        return results


@pytest.fixture
def owner(transactional_db: None, django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("owner", password="owner-pass-1")


@pytest.fixture
def outsider(transactional_db: None, django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("outsider", password="outsider-pass-1")


@pytest.fixture
def owner_token(owner: Any) -> str:
    return tokens.token_create(user=owner, name="tests", expires_in=None)[1]


@pytest.fixture
def api(live_server: Any, owner_token: str) -> Api:
    return Api(live_server.url, owner_token)


@pytest.fixture
def anonymous(live_server: Any) -> Api:
    return Api(live_server.url)


@pytest.fixture
def offline_target(transactional_db: None, owner: Any) -> Target:
    """A target of owner's that nobody listens on: saving plans does not contact it."""
    return Target.objects.create(
        name="offline", host="127.0.0.1", port=1, database="sbtest", user="bench",
        created_by=owner,
    )  # fmt: skip
