"""Tokens for scripts: several per user, named, shown once, stored hashed, revocable."""

from __future__ import annotations

from knox.models import get_token_model

from runs.services import tokens
from tests.api.conftest import Api


def test_a_user_creates_several_tokens_each_shown_once(api, live_server, owner):
    first = api.post("/api/v1/tokens", json={"name": "ci"})
    second = api.post("/api/v1/tokens", json={"name": "laptop", "expires_in_days": 30})

    assert first.status_code == second.status_code == 201
    ci, laptop = first.json()["token"], second.json()["token"]
    assert ci != laptop
    assert second.json()["expiry"] is not None
    if tokens.tokens_named():
        assert (first.json()["name"], second.json()["name"]) == ("ci", "laptop")
    # Each works on its own.
    for text in (ci, laptop):
        assert Api(live_server.url, text).get("/api/v1/plans").status_code == 200

    listed = api.get("/api/v1/tokens")
    assert listed.json()["count"] == 3  # with the one the tests use
    assert ci not in listed.text and laptop not in listed.text
    assert all("token" not in t for t in listed.json()["results"])
    assert ci[:15] in {t["token_key"] for t in listed.json()["results"]}


def test_only_a_digest_of_the_token_is_stored(api, owner):
    text = api.post("/api/v1/tokens", json={"name": "ci"}).json()["token"]

    stored = get_token_model().objects.get(token_key=text[:15])
    assert stored.digest != text
    assert text not in str(list(get_token_model().objects.values_list()))


def test_a_token_is_revoked_by_its_owner_only(api, live_server, outsider):
    outsider_text = tokens.token_create(user=outsider, name="theirs", expires_in=None)[1]
    mine = api.post("/api/v1/tokens", json={"name": "ci"}).json()

    assert api.delete(f"/api/v1/tokens/{outsider_text[:15]}").status_code == 404
    assert Api(live_server.url, outsider_text).get("/api/v1/plans").status_code == 200
    assert outsider_text[:15] not in api.get("/api/v1/tokens").text

    assert api.delete(f"/api/v1/tokens/{mine['token_key']}").status_code == 204
    assert Api(live_server.url, mine["token"]).get("/api/v1/plans").status_code == 401
