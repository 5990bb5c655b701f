"""Custom sysbench Lua scripts: arbitrary code, so only permitted users may upload one,
and a plan with a script runs on SSH load hosts only (see runs/services/plans.py)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import PermissionDenied

from runs.errors import InvalidInput
from runs.models import LuaScript

PERMISSION = "runs.upload_luascript"
MAX_SCRIPT_BYTES = 1_000_000


def luascript_upload(
    *, user: AbstractBaseUser | AnonymousUser, name: str, content: str
) -> LuaScript:
    """Store a script under a new name; PermissionDenied without runs.upload_luascript."""
    if not user.has_perm(PERMISSION):  # type: ignore[union-attr]
        raise PermissionDenied("uploading Lua scripts needs the permission runs.upload_luascript")
    name = name.strip()
    if not name or len(name) > LuaScript._meta.get_field("name").max_length:  # type: ignore[operator]
        raise InvalidInput("name", "give the script a name of 1 to 100 characters")
    if LuaScript.objects.filter(name=name).exists():
        raise InvalidInput("name", f"a script named {name!r} exists already")
    _check_content(content)
    return LuaScript.objects.create(
        name=name, content=content, uploaded_by=user if isinstance(user, User) else None
    )


def _check_content(content: str) -> None:
    if not content.strip():
        raise InvalidInput("content", "the script is empty")
    if len(content.encode()) > MAX_SCRIPT_BYTES:
        raise InvalidInput("content", f"the script is larger than {MAX_SCRIPT_BYTES} bytes")
    if "\0" in content:
        raise InvalidInput("content", "the script holds a NUL byte: is it a text file?")
