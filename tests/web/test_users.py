"""The request's user, read by runs/web/users.py: the same user Django's backend reads,
sessions logged in by Django's backend still valid, a refused password checked once."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, aauthenticate
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.hashers import MD5PasswordHasher
from django.contrib.sessions.backends.db import SessionStore

from runs.web.users import UserBackend

pytestmark = pytest.mark.django_db

DJANGOS = "django.contrib.auth.backends.ModelBackend"


class CountingHasher(MD5PasswordHasher):
    """MD5 (fast), counting the passwords it checks."""

    algorithm = "counting_md5"
    checked = 0

    def verify(self, password: str, encoded: str) -> bool:
        type(self).checked += 1
        return super().verify(password, encoded)


def test_the_user_read_is_the_one_djangos_backend_reads(django_user_model):
    ana = django_user_model.objects.create_user("ana", password="ana-pass-123", email="a@x.org")
    mine, djangos = UserBackend().get_user(str(ana.pk)), ModelBackend().get_user(ana.pk)
    assert mine is not None and djangos is not None
    for field in django_user_model._meta.concrete_fields:
        assert getattr(mine, field.attname) == getattr(djangos, field.attname), field.name
    assert mine.get_session_auth_hash() == djangos.get_session_auth_hash()
    assert UserBackend().get_user(ana.pk + 1000) is None
    assert UserBackend().get_user("not a number") is None
    ana.is_active = False
    ana.save()
    assert UserBackend().get_user(ana.pk) is None  # as Django's: an inactive user is none


def test_a_login_is_this_backends_and_a_session_of_djangos_backend_still_signs_in(
    client, django_user_model
):
    ana = django_user_model.objects.create_user("ana", password="ana-pass-123")
    assert client.login(username="ana", password="ana-pass-123")
    assert client.session[BACKEND_SESSION_KEY] == "runs.web.users.UserBackend"
    assert client.get("/").status_code == 200

    # A session made before this backend: Django's own named in it.
    old = SessionStore()
    old.update({SESSION_KEY: str(ana.pk), BACKEND_SESSION_KEY: DJANGOS,
                HASH_SESSION_KEY: ana.get_session_auth_hash()})  # fmt: skip
    old.create()
    client.logout()
    client.cookies["sessionid"] = old.session_key
    page = client.get("/")
    assert page.status_code == 200 and b"ana" in page.content


def test_a_refused_password_is_checked_once_not_once_a_backend(client, django_user_model, settings):
    settings.PASSWORD_HASHERS = ["tests.web.test_users.CountingHasher"]
    django_user_model.objects.create_user("ana", password="ana-pass-123")
    CountingHasher.checked = 0
    assert not client.login(username="ana", password="wrong")
    assert CountingHasher.checked == 1
    assert client.login(username="ana", password="ana-pass-123")
    assert CountingHasher.checked == 2


@pytest.mark.django_db(transaction=True)
def test_an_asynchronous_login_is_refused_with_one_check_too(django_user_model, settings):
    settings.PASSWORD_HASHERS = ["tests.web.test_users.CountingHasher"]
    django_user_model.objects.create_user("ana", password="ana-pass-123")
    CountingHasher.checked = 0
    assert async_to_sync(aauthenticate)(None, username="ana", password="wrong") is None
    assert CountingHasher.checked == 1
    user = async_to_sync(aauthenticate)(None, username="ana", password="ana-pass-123")
    assert user is not None and user.backend == "runs.web.users.UserBackend"
