"""API tokens (django-rest-knox), remembered for the health answer while the results
database is down (runs/services/verified_tokens.py says what is kept and why).

TokenAuthentication is knox's, named by REST_FRAMEWORK's DEFAULT_AUTHENTICATION_CLASSES:
each token the database verifies is remembered a while. On the health endpoint alone
(`recalls=True`) it takes a remembered token when the database cannot be asked;
a token it does not remember gets the database-down answer (runs/api/errors.py), as any
other endpoint does then.
"""

from __future__ import annotations

from typing import Any

from django.db import InterfaceError, OperationalError
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from knox import auth
from knox.settings import CONSTANTS

from runs.services import verified_tokens


class TokenAuthentication(auth.TokenAuthentication):
    """knox's, remembering each token the database verifies; `recalls=True` (the health
    endpoint alone, Health.get_authenticators) also takes a remembered token while the
    database cannot be asked. One class for both: the schema names one token scheme, and
    drf-spectacular tells schemes apart by class."""

    def __init__(self, *, recalls: bool = False) -> None:
        super().__init__()
        self.recalls = recalls

    def authenticate_credentials(self, token: bytes) -> tuple[Any, Any]:
        try:
            user, auth_token = super().authenticate_credentials(token)
        except (OperationalError, InterfaceError):
            username = self._recalled(token) if self.recalls else None
            if username is None:
                raise  # not verified lately: the database-down answer
            return RecalledUser(username), None
        text = token.decode("utf-8")
        verified_tokens.remember(
            token=text,
            token_key=text[: CONSTANTS.TOKEN_KEY_LENGTH],
            username=user.get_username(),
            expiry=auth_token.expiry,
        )
        return user, auth_token

    def _recalled(self, token: bytes) -> str | None:
        text = token.decode("utf-8", errors="replace")
        return verified_tokens.recalled(token=text, token_key=text[: CONSTANTS.TOKEN_KEY_LENGTH])


class TokenScheme(KnoxTokenScheme):
    """The schema's token scheme, as for knox's own class (drf-spectacular matches by class)."""

    target_class = "runs.api.auth.TokenAuthentication"
    match_subclasses = True


class RecalledUser:
    """The user of a token the database verified lately, while it cannot be asked: enough
    for IsAuthenticated, nothing else (no permission, no row)."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None
    id = None

    def __init__(self, username: str) -> None:
        self.username = username

    def get_username(self) -> str:
        return self.username

    def has_perm(self, perm: str, obj: object = None) -> bool:
        return False

    def __str__(self) -> str:
        return self.username
