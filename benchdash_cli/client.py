"""HTTP to benchdash's REST API with a token, standard library only. The token goes in the
Authorization header and nowhere else: never in a message, never in a URL."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

API = "/api/v1"
TIMEOUT_S = 30.0


class ApiError(Exception):
    """The server could not be reached, or answered an error: in words for the user."""


class Client:
    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self._token = token

    def __repr__(self) -> str:  # the token stays out of tracebacks and logs
        return f"Client({self.url!r})"

    def get(self, path: str, *, answers: tuple[int, ...] = ()) -> Any:
        """The JSON answer; `answers`: error codes whose body is an answer too (the
        health endpoint's 503)."""
        return self._request("GET", path, answers)

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        """POST, with `body` as JSON when given."""
        return self._request("POST", path, body=body)

    def page_url(self, path: str) -> str:
        """A link for people: the server's page at `path`."""
        return self.url + path

    def _request(
        self,
        method: str,
        path: str,
        answers: tuple[int, ...] = (),
        body: dict[str, Any] | None = None,
    ) -> Any:
        headers = {
            "Authorization": f"Token {self._token}",
            "Accept": "application/json",
            "User-Agent": "benchdash-cli",
        }
        if body is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(  # noqa: S310 (the user's own server, http or https)
            self.url + API + path,
            method=method,
            headers=headers,
            data=None if body is None else json.dumps(body).encode(),
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
                return json.load(response)
        except urllib.error.HTTPError as e:
            if e.code in answers:
                try:
                    return json.load(e)
                except (ValueError, OSError):
                    pass
            raise ApiError(f"{method} {API}{path}: HTTP {e.code} {_detail(e)}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ApiError(f"{self.url} cannot be reached: {reason}") from None


def _detail(error: urllib.error.HTTPError) -> str:
    """The API's error message (docs/api.md: {"field": ..., "message": ...})."""
    try:
        body = json.load(error)
    except (ValueError, OSError):
        return error.reason or ""
    if isinstance(body, dict) and "message" in body:
        field = f" ({body['field']})" if body.get("field") else ""
        return f"{body['message']}{field}"
    return error.reason or ""
