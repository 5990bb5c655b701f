"""API tokens for scripts (django-rest-knox): each user creates as many as they need and
revokes them one by one. A token is shown once, at creation; only its SHA-512 digest and
its first characters (to tell tokens apart) are stored.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from knox.models import AuthToken, get_token_model

from runs.errors import InvalidInput
from runs.services import verified_tokens


def _token_model() -> type[AuthToken]:
    model: type[AuthToken] = get_token_model()
    return model


def tokens_named() -> bool:
    # knox's own model has no name; a swapped-in KNOX_TOKEN_MODEL with a `name` field has.
    return any(f.name == "name" for f in _token_model()._meta.get_fields())


def token_create(
    *, user: AbstractBaseUser, name: str, expires_in: timedelta | None
) -> tuple[AuthToken, str]:
    """A new token of `user`, and its clear text: the only time it is ever available."""
    instance, text = _token_model().objects.create(user=user, expiry=expires_in, name=name)
    return instance, text


def tokens_of(user: AbstractBaseUser) -> QuerySet[AuthToken]:
    return _token_model().objects.filter(user=user).order_by("-created")


def token_revoke(*, user: AbstractBaseUser, token_key: str) -> bool:
    """Revoke one of the user's own tokens; False when there is no such token."""
    deleted, _ = tokens_of(user).filter(token_key=token_key).delete()
    verified_tokens.forget(token_key=token_key)  # not even health takes it any more
    return deleted > 0


@transaction.atomic
def token_create_for(
    *, username: str, name: str, expires_in: timedelta | None, create_user: bool = False
) -> tuple[AuthToken, str]:
    """A token for the user named `username`, e.g. a service account on a machine without
    a browser. With create_user, such a user is made when missing: it has no password, so
    it can log in with its tokens only."""
    users = get_user_model().objects
    user = users.filter(username=username).first()
    if user is None:
        if not create_user:
            raise InvalidInput(
                "user", f"no user named {username!r}; create it first, or ask to create it"
            )
        user = users.create_user(username=username, password=None)  # an unusable password
    return token_create(user=user, name=name, expires_in=expires_in)
