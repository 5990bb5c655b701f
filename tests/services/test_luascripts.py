"""Uploading custom Lua scripts and bundles: arbitrary code, so only users with the
permission may; a script sysbench cannot load is refused (it is asked, so these tests run
sysbench); an upload under a known name is the next version, for its owner."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.core.exceptions import PermissionDenied

from runs.errors import InvalidInput
from runs.models import LuaScript, LuaScriptVersion
from runs.services.scripts.luascripts import (
    luascript_interface,
    luascript_upload,
    luascript_versions,
)
from runs.sysbench import bundles

SCRIPT = "function event() end\n"
TPCC_LIKE = Path(__file__).parent.parent / "fixtures" / "lua" / "tpcc_like"


def bundle_files() -> dict[str, str]:
    return {path.name: path.read_text() for path in TPCC_LIKE.glob("*.lua")}


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


def test_a_second_upload_under_a_name_is_its_next_version_the_first_kept(db, author):
    first = luascript_upload(user=author, name="mine", content=SCRIPT)

    second = luascript_upload(user=author, name="mine", files=bundle_files())

    assert second.pk == first.pk and second.version == 2
    assert second.entry == "tpcc_like.lua" and len(second.files) == 3
    assert second.digests == bundles.digests_of(bundle_files())
    kept = LuaScriptVersion.objects.get(script=second)
    assert (kept.version, kept.content, kept.entry, kept.files) == (1, SCRIPT, "", {})
    assert [v["version"] for v in luascript_versions(script=second)] == [2, 1]


def test_only_the_owner_or_staff_upload_a_new_version(db, author, django_user_model):
    luascript_upload(user=author, name="mine", content=SCRIPT)
    other = django_user_model.objects.create_user("other")
    other.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    other = django_user_model.objects.get(pk=other.pk)

    with pytest.raises(PermissionDenied, match="only the owner of the script mine"):
        luascript_upload(user=other, name="mine", content="-- mine now\n")

    other.is_staff = True
    other.save()
    assert luascript_upload(user=other, name="mine", content="-- staff\n").version == 2
    assert LuaScript.objects.get(name="mine").uploaded_by == author  # still the owner


def test_a_bundle_uploaded_as_an_archive_is_the_same_bundle(db, author):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path in sorted(TPCC_LIKE.glob("*.lua")):
            archive.add(path, arcname=f"tpcc-like/{path.name}")

    script = luascript_upload(user=author, name="from archive", archive=out.getvalue())

    assert script.entry == "tpcc_like.lua"
    assert {script.entry: script.content, **script.files} == bundle_files()
    interface = luascript_interface(script=script)
    assert set(interface.options) == {"report_csv", "scale", "tables", "trx_level"}
    assert interface.has("check")


def test_a_hostile_archive_is_refused_and_nothing_stored(db, author):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        info = tarfile.TarInfo("evil.lua")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        archive.addfile(info)

    with pytest.raises(InvalidInput, match="is a link") as refused:
        luascript_upload(user=author, name="evil", archive=out.getvalue())

    assert refused.value.field == "archive"
    assert not LuaScript.objects.exists()


@pytest.mark.parametrize(
    ("files", "words"),
    [
        ({"main.lua": "require('missing_module')\n"}, "module 'missing_module' not found"),
        ({"main.lua": "function event(\n"}, "unexpected symbol|expected"),
    ],
)
def test_a_script_sysbench_cannot_load_is_refused_with_its_words(db, author, files, words):
    with pytest.raises(InvalidInput, match=words) as refused:
        luascript_upload(user=author, name="broken", files=files)

    assert refused.value.field == "files"
    assert not LuaScript.objects.exists()
