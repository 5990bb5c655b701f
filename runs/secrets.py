"""Secrets at rest: a model field that stores its value encrypted with Fernet.

The keys come from settings.ENCRYPTION_KEYS (newest first), so an old key can stay
readable while new values are written with the new one."""

from __future__ import annotations

from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.db import models

PREFIX = "fernet:"


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(k.encode()) for k in settings.ENCRYPTION_KEYS])


def encrypt(plain: str) -> str:
    return PREFIX + _fernet().encrypt(plain.encode()).decode()


def decrypt(stored: str) -> str:
    if not stored.startswith(PREFIX):
        raise ValueError("value is not encrypted")
    try:
        return _fernet().decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken as e:
        raise ValueError(
            "cannot decrypt a stored secret: BENCHDASH_ENCRYPTION_KEYS does not hold the key "
            "it was written with"
        ) from e


class EncryptedTextField(models.TextField):
    """Holds plain text in Python and ciphertext in the database. Empty stays empty."""

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> str | None:
        if not value:
            return value
        return decrypt(value)

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if not value:
            return value
        return encrypt(str(value))
