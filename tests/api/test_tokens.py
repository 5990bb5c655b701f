"""Tokens for scripts: several per user, named, shown once, stored hashed, revocable."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.utils import timezone
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


def test_the_first_token_of_a_machine_without_a_browser_comes_with_basic_auth(
    anonymous, live_server, owner
):
    # What `curl -u owner:... -X POST .../api/v1/tokens` does: no session, no CSRF token.
    answer = anonymous.post("/api/v1/tokens", json={"name": "ci"}, auth=("owner", "owner-pass-1"))

    assert answer.status_code == 201, answer.text
    assert Api(live_server.url, answer.json()["token"]).get("/api/v1/plans").status_code == 200


def test_a_wrong_password_gets_no_token(anonymous, owner):
    answer = anonymous.post("/api/v1/tokens", json={"name": "ci"}, auth=("owner", "wrong"))

    assert answer.status_code == 401
    assert answer.json()["field"] is None and answer.json()["message"]
    assert not tokens.tokens_of(owner).exists()


def test_a_password_opens_the_token_endpoint_only(anonymous, owner):
    assert anonymous.get("/api/v1/plans", auth=("owner", "owner-pass-1")).status_code == 401


def test_create_token_makes_one_for_a_service_account(live_server, owner):
    out = io.StringIO()
    call_command(
        "create_token", "nightly-bot", "nightly", "--expires-in-days", "30", "--create-user",
        stdout=out,
    )  # fmt: skip
    text = out.getvalue().strip()

    assert Api(live_server.url, text).get("/api/v1/plans").status_code == 200
    (stored,) = tokens.tokens_of(User.objects.get(username="nightly-bot"))
    assert stored.expiry is not None
    assert timedelta(days=29) < stored.expiry - timezone.now() <= timedelta(days=30)
    # The account has no password: it logs in with its tokens only.
    assert not User.objects.get(username="nightly-bot").has_usable_password()

    out = io.StringIO()
    call_command("create_token", "owner", "laptop", stdout=out)
    assert tokens.tokens_of(owner).get().expiry is None


def test_create_token_refuses_an_unknown_user(transactional_db):
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("create_token", "nobody", "ci")
    assert not User.objects.filter(username="nobody").exists()
