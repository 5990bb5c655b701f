"""Uploading custom Lua scripts: arbitrary code, so only users with the permission may."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.core.exceptions import PermissionDenied

from runs.errors import InvalidInput
from runs.models import LuaScript
from runs.services.luascripts import luascript_upload

SCRIPT = "function event() end\n"


@pytest.fixture
def author(django_user_model):
    user = django_user_model.objects.create_user("author")
    user.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    return django_user_model.objects.get(pk=user.pk)  # a fresh permission cache


@pytest.fixture
def teammate(django_user_model):
    return django_user_model.objects.create_user("teammate")


def test_a_user_with_the_permission_uploads_a_script(db, author):
    script = luascript_upload(user=author, name="point selects", content=SCRIPT)

    assert script.content == SCRIPT
    assert script.uploaded_by == author


def test_a_user_without_the_permission_is_refused(db, teammate):
    with pytest.raises(PermissionDenied, match=r"runs\.upload_luascript"):
        luascript_upload(user=teammate, name="sneaky", content=SCRIPT)

    assert not LuaScript.objects.exists()


def test_an_anonymous_user_is_refused(db):
    with pytest.raises(PermissionDenied):
        luascript_upload(user=AnonymousUser(), name="sneaky", content=SCRIPT)


@pytest.mark.parametrize(
    ("name", "content", "field"),
    [
        ("", SCRIPT, "name"),
        ("x" * 101, SCRIPT, "name"),
        ("empty", "  \n", "content"),
        ("binary", "a\0b", "content"),
        ("huge", "-" * 1_000_001, "content"),
    ],
)
def test_bad_scripts_are_refused_naming_the_field(db, author, name, content, field):
    with pytest.raises(InvalidInput) as refused:
        luascript_upload(user=author, name=name, content=content)

    assert refused.value.field == field


def test_names_are_unique(db, author):
    luascript_upload(user=author, name="mine", content=SCRIPT)

    with pytest.raises(InvalidInput, match="exists already"):
        luascript_upload(user=author, name="mine", content=SCRIPT)
