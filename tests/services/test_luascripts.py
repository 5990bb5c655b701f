"""Uploading custom Lua scripts and bundles: arbitrary code, so only users with the
permission may; a script sysbench cannot load is refused (it is asked, so these tests run
sysbench); an upload under a known name is the next version, for its owner."""

from __future__ import annotations

import io
import tarfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.core.exceptions import PermissionDenied
from django.utils import timezone

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
    kept = LuaScriptVersion.objects.get(script=second, version=1)
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


def test_each_upload_records_its_uploader_and_time_at_once(db, author, django_user_model):
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    staff = django_user_model.objects.get(pk=staff.pk)
    spans = []
    for n, user in enumerate([author, staff, author], start=1):
        before = timezone.now()
        script = luascript_upload(user=user, name="mine", content=f"x = {n}\n")
        spans.append((before, timezone.now()))

    rows = LuaScriptVersion.objects.filter(script=script).order_by("version")
    assert [(v.version, v.uploaded_by, v.content) for v in rows] == [
        (1, author, "x = 1\n"), (2, staff, "x = 2\n"), (3, author, "x = 3\n"),
    ]  # fmt: skip
    for row, (before, after) in zip(rows, spans, strict=True):
        assert before <= row.created_at <= after
    assert script.uploaded_by == author  # the owner stays who uploaded the first


def test_a_script_stored_before_versions_kept_their_uploader_is_listed_as_uploaded(db, author):
    """Before, a version's row was written when the next upload replaced it, with that
    upload's time and the owner's name, and the current version had no row: the list reads
    each version's time from the row before it, and the next upload sets the rows right."""
    first, second, third = (timezone.now() - timedelta(days=d) for d in (3, 2, 1))
    script = luascript_upload(user=author, name="old", content="x = 3\n")
    LuaScript.objects.filter(pk=script.pk).update(version=3, created_at=first)
    LuaScriptVersion.objects.filter(script=script).delete()
    for version, replaced_at in ((1, second), (2, third)):
        row = LuaScriptVersion.objects.create(
            script=script, version=version, content=f"x = {version}\n", uploaded_by=author
        )
        LuaScriptVersion.objects.filter(pk=row.pk).update(created_at=replaced_at)
    script = LuaScript.objects.get(pk=script.pk)

    versions = luascript_versions(script=script)
    listed = [(v["version"], v["uploaded_by"], v["created_at"]) for v in versions]
    before = timezone.now()
    luascript_upload(user=author, name="old", content="x = 4\n")

    assert listed == [(3, None, third), (2, None, second), (1, "author", first)]
    again = luascript_versions(script=LuaScript.objects.get(pk=script.pk))
    assert [(v["version"], v["uploaded_by"]) for v in again] == [
        (4, "author"), (3, None), (2, None), (1, "author"),
    ]  # fmt: skip
    assert [v["created_at"] for v in again[1:]] == [third, second, first]
    assert LuaScriptVersion.objects.get(script=script, version=4).created_at >= before
    assert LuaScriptVersion.objects.get(script=script, version=3).content == "x = 3\n"


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
