"""What the API's modules share."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from rest_framework.request import Request

SECRET_STYLE = {"input_type": "password"}


def assign(instance: Any, values: dict[str, Any]) -> Any:
    for name, value in values.items():
        setattr(instance, name, value)
    return instance


def request_user(request: Request) -> User:
    # IsAuthenticated lets no anonymous request through.
    assert isinstance(request.user, User)
    return request.user
