"""What the API's modules share."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from runs.services import permissions

SECRET_STYLE = {"input_type": "password"}


def assign(instance: Any, values: dict[str, Any]) -> Any:
    for name, value in values.items():
        setattr(instance, name, value)
    return instance


def request_user(request: Request) -> User:
    # IsAuthenticated lets no anonymous request through.
    assert isinstance(request.user, User)
    return request.user


class MayChange(BasePermission):
    """Writes to a target, load host or plan: runs/services/permissions.py decides, before
    the input is even read; a refusal is a 403 that says who may."""

    def has_object_permission(self, request: Request, view: APIView, obj: Any) -> bool:
        if request.method not in SAFE_METHODS:
            action = "delete" if request.method == "DELETE" else "change"
            permissions.require(request.user, action, obj)
        return True


OWNED = [IsAuthenticated, MayChange]
