"""Custom sysbench Lua scripts and bundles: arbitrary code, so only permitted users may
upload one. A script is one file, or a bundle (several files, or a tar.gz or zip archive,
with one entry script: runs/sysbench/bundles.py). Uploading under a name that exists makes
a new version of that script, the old one kept, and is for the script's owner (who
uploaded its first version), staff, or a member of a group with runs.change_luascript.
Every upload writes its own LuaScriptVersion row at once (the current version too), with
its uploader and its time. A batch freezes the version that ran (runs/frozen.py).

What a script offers (its options and commands) is asked of sysbench when it is uploaded
(a script sysbench cannot load is refused) and when a plan is checked or launched
(runs/loadhosts/script_probe.py), and kept per content digest in this process.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Prefetch, QuerySet

from runs.errors import ExecutorError, InvalidInput
from runs.frozen import FrozenScript
from runs.loadhosts.script_probe import probe_script
from runs.models import LuaScript, LuaScriptVersion
from runs.sysbench import bundles
from runs.sysbench.script_options import ScriptInterface, parse_probe

PERMISSION = "runs.upload_luascript"
MAX_SCRIPT_BYTES = bundles.MAX_FILE_BYTES
ONE_FILE = "script.lua"  # a one-file script's name where it is staged

AnyUser = AbstractBaseUser | AnonymousUser


def luascript_upload(
    *,
    user: AnyUser,
    name: str,
    content: str = "",
    files: Mapping[str, str] | None = None,
    archive: bytes | None = None,
    entry: str = "",
) -> LuaScript:
    """Store a script (`content`) or a bundle (`files`, or an `archive`) under `name`: a
    new script, or the next version of the script of that name. PermissionDenied without
    runs.upload_luascript, or for another's script; InvalidInput naming the field."""
    if not user.has_perm(PERMISSION):  # type: ignore[union-attr]
        raise PermissionDenied("uploading Lua scripts needs the permission runs.upload_luascript")
    name = _checked_name(name)
    bundle = _bundle(content, files, archive, entry)
    interface = _loaded(bundle)
    uploader = user if isinstance(user, User) else None
    one_file = not files and archive is None
    with transaction.atomic():
        script = LuaScript.objects.select_for_update().filter(name=name).first()
        if script is None:
            script = LuaScript(name=name, version=1)
        else:
            require_may_version(user, script)
            _keep_unrecorded(script)
            script.version += 1
        script.content = bundle.content
        script.files = bundle.files
        script.entry = "" if one_file else bundle.entry
        staged = {ONE_FILE: bundle.content} if one_file else bundle.all_files
        script.digests = bundles.digests_of(staged)
        if script.pk is None:
            script.uploaded_by = uploader  # the owner: who uploaded the first version
        script.save()
        _record_version(script, uploader)
    del interface  # asked only to refuse a script sysbench cannot load
    return script


def may_version(user: AnyUser, script: LuaScript) -> bool:
    """Whether the user may upload a new version of the script: its owner, staff, or a
    member of a group with runs.change_luascript."""
    if not isinstance(user, User) or not user.is_active:
        return False
    owns = script.uploaded_by_id is not None and script.uploaded_by_id == user.pk
    return user.is_staff or owns or user.has_perm("runs.change_luascript")


def require_may_version(user: AnyUser, script: LuaScript) -> None:
    if not may_version(user, script):
        owner = script.uploaded_by.username if script.uploaded_by else "nobody"
        raise PermissionDenied(
            f"only the owner of the script {script.name} ({owner}), staff, or a member of a "
            "group with runs.change_luascript may upload a new version of it"
        )


def luascripts_listed() -> QuerySet[LuaScript]:
    """The scripts with their owners and their versions' uploaders, for the list and
    luascript_versions, in a fixed number of queries."""
    versions = LuaScriptVersion.objects.select_related("uploaded_by")
    return LuaScript.objects.select_related("uploaded_by").prefetch_related(
        Prefetch("versions", queryset=versions)
    )


def luascript_versions(*, script: LuaScript) -> list[dict[str, object]]:
    """Every version of a script, in upload order from the newest (the current one) to
    the first, each with who uploaded it and when."""
    rows = sorted(script.versions.all(), key=lambda v: v.version, reverse=True)
    if not rows or rows[0].version != script.version:
        rows = _as_uploaded(script, rows)
    return [_version_dict(v) for v in rows]


def luascript_interface(*, script: LuaScript | FrozenScript) -> ScriptInterface:
    """The script's options and commands, as sysbench reports them; InvalidInput when
    sysbench cannot load it."""
    frozen = script if isinstance(script, FrozenScript) else luascript_frozen(script=script)
    files = tuple(sorted(frozen.staged_files.items()))
    return _interface(files, frozen.entry_name)


def luascript_frozen(
    *, script: LuaScript, options: Mapping[str, object] | None = None
) -> FrozenScript:
    """The script as a batch freezes it: its files, version and interface, and the plan's
    values for its options."""
    frozen = FrozenScript(
        name=script.name,
        content=script.content,
        files=dict(script.files or {}),
        entry=script.entry,
        version=script.version,
        digests=dict(script.digests or {}),
        options=dict(options or {}),
    )
    if options is None:
        return frozen
    interface = luascript_interface(script=frozen)
    return dataclasses.replace(frozen, interface=interface.to_json())


# --- helpers ------------------------------------------------------------------------------


def _checked_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > LuaScript._meta.get_field("name").max_length:  # type: ignore[operator]
        raise InvalidInput("name", "give the script a name of 1 to 100 characters")
    return name


def _bundle(
    content: str, files: Mapping[str, str] | None, archive: bytes | None, entry: str
) -> bundles.Bundle:
    if archive is not None:
        return bundles.bundle_from_archive(archive, entry)
    if files:
        return bundles.bundle_from_files(files, entry)
    _check_content(content)
    return bundles.Bundle(entry=ONE_FILE, content=content)


def _check_content(content: str) -> None:
    if not content.strip():
        raise InvalidInput("content", "the script is empty")
    if len(content.encode()) > MAX_SCRIPT_BYTES:
        raise InvalidInput("content", f"the script is larger than {MAX_SCRIPT_BYTES} bytes")
    if "\0" in content:
        raise InvalidInput("content", "the script holds a NUL byte: is it a text file?")


def _loaded(bundle: bundles.Bundle) -> ScriptInterface:
    return _interface(tuple(sorted(bundle.all_files.items())), bundle.entry)


@functools.lru_cache(maxsize=64)
def _interface(files: tuple[tuple[str, str], ...], entry: str) -> ScriptInterface:
    try:
        lines = probe_script(dict(files), entry, settings.BENCHDASH_SYSBENCH)
    except ExecutorError as e:
        raise InvalidInput("files", f"sysbench could not load the script: {e}") from None
    fatal = [line for line in lines if line.startswith("FATAL:")]
    if fatal:
        raise InvalidInput("files", "sysbench could not load the script: " + " ".join(fatal))
    return parse_probe(lines)


def _record_version(script: LuaScript, uploader: User | None) -> None:
    LuaScriptVersion.objects.create(
        script=script,
        version=script.version,
        content=script.content,
        files=script.files,
        entry=script.entry,
        digests=script.digests,
        uploaded_by=uploader,
    )


def _keep_unrecorded(script: LuaScript) -> None:
    """A script stored before each upload wrote its own row: its rows set right (see
    _as_uploaded) and its current version kept, before the next upload is recorded."""
    rows = list(script.versions.order_by("-version"))
    if rows and rows[0].version == script.version:
        return
    for row in _as_uploaded(script, rows):
        uploaded_at = row.created_at
        if row.pk is None:
            row.save()  # auto_now_add stamps it now: its upload time is written below
        LuaScriptVersion.objects.filter(pk=row.pk).update(
            created_at=uploaded_at, uploaded_by=row.uploaded_by
        )


def _as_uploaded(script: LuaScript, rows: list[LuaScriptVersion]) -> list[LuaScriptVersion]:
    """The versions of a script stored before each upload wrote its own row, newest first,
    with their upload times. Then a version's row was written when the next upload replaced
    it, with that upload's time and the owner's name: so a version's upload time is on the
    row of the version before it (the first's is the script's), and who uploaded a version
    after the first is not known. `rows` (newest first) are changed in place."""
    current = LuaScriptVersion(
        script=script,
        version=script.version,
        content=script.content,
        files=script.files,
        entry=script.entry,
        digests=script.digests,
    )
    versions = [current, *rows]
    times = [row.created_at for row in rows] + [script.created_at]
    for version, uploaded_at in zip(versions, times, strict=True):
        version.created_at = uploaded_at
        version.uploaded_by = script.uploaded_by if version.version == 1 else None
    return versions


def _version_dict(version: LuaScriptVersion) -> dict[str, object]:
    return {
        "version": version.version,
        "entry": version.entry or ONE_FILE,
        "digests": dict(version.digests or {}),
        "created_at": version.created_at,
        "uploaded_by": version.uploaded_by.username if version.uploaded_by else None,
    }
