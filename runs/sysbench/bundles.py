"""Lua bundles: several sysbench Lua files uploaded together, or in a tar.gz or zip
archive, with one entry script that `require`s its siblings. A bundle is staged flat in
sysbench's private directory on the load host, which is sysbench's working directory, so
`require("tpcc_common")` finds `tpcc_common.lua` there (sysbench's package.path starts
with ./?.lua).

An archive is read in memory and refused, as a whole, when it holds a link, a device, an
absolute path, a `..` step, more than MAX_FILES members or more than MAX_TOTAL_BYTES once
unpacked (each member's size is read from its header before anything is inflated, and
the inflated bytes are counted again while reading). A damaged archive (a size or an offset
that lies, a bad CRC, a file cut short) is refused naming the damage, never raised
further. Only `*.lua` files are kept; other
files (a README, a licence) are listed as skipped. One top directory shared by every
member (`sysbench-tpcc-master/`) is taken off; Lua files deeper than that are refused,
since a bundle is staged flat.

Pure: no Django, no file system.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import re
import tarfile
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from runs.errors import InvalidInput

MAX_FILES = 64  # members of an archive, directories included
MAX_FILE_BYTES = 1_000_000  # one Lua file
MAX_TOTAL_BYTES = 4_000_000  # the whole bundle, unpacked
MAX_ARCHIVE_BYTES = 4_000_000  # the archive as uploaded
FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,99}\.lua")
# The probe's own file in the discovery directory (loadhosts/script_probe.py).
RESERVED_PREFIX = "benchdash"


@dataclass(frozen=True)
class Bundle:
    """One entry script and its sibling files, by file name, with their SHA-256."""

    entry: str
    content: str  # the entry script's text
    files: dict[str, str] = field(default_factory=dict)  # the siblings: name → text
    skipped: tuple[str, ...] = ()  # archive members that are not Lua files

    @property
    def all_files(self) -> dict[str, str]:
        return {self.entry: self.content, **self.files}

    @property
    def digests(self) -> dict[str, str]:
        return digests_of(self.all_files)


def digests_of(files: Mapping[str, str]) -> dict[str, str]:
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in sorted(files.items())}


def bundle_from_files(files: Mapping[str, str], entry: str = "") -> Bundle:
    """A bundle of files uploaded one by one (name → text); the entry is named, or the
    only file, or the one file the others do not `require`."""
    if not files:
        raise InvalidInput("files", "upload at least one .lua file")
    if len(files) > MAX_FILES:
        raise InvalidInput("files", f"a bundle holds at most {MAX_FILES} files")
    for name, text in files.items():
        check_file(name, text)
    total = sum(len(text.encode()) for text in files.values())
    if total > MAX_TOTAL_BYTES:
        raise InvalidInput("files", f"the bundle is larger than {MAX_TOTAL_BYTES} bytes")
    chosen = _entry(files, entry)
    siblings = {name: text for name, text in sorted(files.items()) if name != chosen}
    return Bundle(entry=chosen, content=files[chosen], files=siblings)


def bundle_from_archive(data: bytes, entry: str = "") -> Bundle:
    """A bundle read from a tar.gz (or tar) or zip archive; InvalidInput("archive", ...)
    naming the member at fault when the archive is hostile or too large."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise InvalidInput("archive", f"the archive is larger than {MAX_ARCHIVE_BYTES} bytes")
    members = dict(_members(data))
    names = _flattened(list(members))
    lua = {names[path]: text for path, text in members.items() if path.endswith(".lua")}
    skipped = tuple(sorted(path for path in members if not path.endswith(".lua")))
    if not lua:
        raise InvalidInput("archive", "the archive holds no .lua file")
    bundle = bundle_from_files(lua, entry)
    return Bundle(bundle.entry, bundle.content, bundle.files, skipped)


def check_file(name: str, text: str) -> None:
    if not FILE_NAME.fullmatch(name) or name.startswith(RESERVED_PREFIX):
        raise InvalidInput(
            "files",
            f"{name!r} is not a Lua file name benchdash can stage: letters, digits, _ and -, "
            f"ending in .lua, not starting with {RESERVED_PREFIX!r}",
        )
    if not text.strip():
        raise InvalidInput("files", f"{name} is empty")
    if "\0" in text:
        raise InvalidInput("files", f"{name} holds a NUL byte: is it a text file?")
    if len(text.encode()) > MAX_FILE_BYTES:
        raise InvalidInput("files", f"{name} is larger than {MAX_FILE_BYTES} bytes")


def _entry(files: Mapping[str, str], entry: str) -> str:
    if entry:
        if entry not in files:
            raise InvalidInput("entry", f"the entry script {entry!r} is not among the files")
        return entry
    if len(files) == 1:
        return next(iter(files))
    required = {m for text in files.values() for m in _REQUIRE.findall(text)}
    roots = [name for name in files if name.removesuffix(".lua") not in required]
    if len(roots) != 1:
        raise InvalidInput(
            "entry", f"name the entry script: one of {', '.join(sorted(roots or files))}"
        )
    return roots[0]


_REQUIRE = re.compile(r"""require\s*\(?\s*["']([A-Za-z0-9_-]+)["']""")


# --- archives ---------------------------------------------------------------------------

# What reading a damaged archive raises besides zipfile's and tarfile's own errors:
# inflating garbage (zlib, lzma; bz2 and gzip raise OSError), reading past the end of the
# data (EOFError), a header's field out of range (ValueError).
_DAMAGE = (
    zipfile.BadZipFile,
    tarfile.TarError,
    zlib.error,
    lzma.LZMAError,
    OSError,
    EOFError,
    ValueError,
)
ZIP_MAGIC = b"PK\x03\x04"  # a zip's first local header: a zip cut short still starts so


def _members(data: bytes) -> Iterator[tuple[str, str]]:
    """(path, text) of each regular file, after every member passed the checks."""
    if data.startswith(ZIP_MAGIC) or zipfile.is_zipfile(io.BytesIO(data)):
        yield from _zip_members(data)
        return
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")  # noqa: SIM115 (closed below)
    except _DAMAGE as e:
        raise InvalidInput(
            "archive", f"not a tar.gz, tar or zip archive ({_one_line(e)})"
        ) from None
    with archive:
        yield from _tar_members(archive)


def _tar_members(archive: tarfile.TarFile) -> Iterator[tuple[str, str]]:
    infos: list[tarfile.TarInfo] = []
    try:
        # Header by header, stopping at the first member past a bound: a bomb is refused
        # before it is inflated.
        for info in archive:
            infos.append(info)
            _counted(infos)
            _check_member(info)
            _check_total(sum(i.size for i in infos if i.isfile()))
    except _DAMAGE as e:
        raise InvalidInput("archive", f"the archive is damaged ({_one_line(e)})") from None
    for info in infos:
        if info.isfile():
            yield info.name.removeprefix("./"), _text(info.name, _tar_read(archive, info))


def _tar_read(archive: tarfile.TarFile, info: tarfile.TarInfo) -> bytes:
    try:
        stream = archive.extractfile(info)
        assert stream is not None  # a regular file always has one
        return stream.read(MAX_FILE_BYTES + 1)
    except _DAMAGE as e:
        raise InvalidInput(
            "archive", f"the archive is damaged at {info.name} ({_one_line(e)})"
        ) from None


def _check_member(info: tarfile.TarInfo) -> None:
    _check_path(info.name)
    if not (info.isfile() or info.isdir()):
        kind = "link" if info.issym() or info.islnk() else "special file"
        raise InvalidInput("archive", f"{info.name} is a {kind}: only plain files are taken")


def _zip_members(data: bytes) -> Iterator[tuple[str, str]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _DAMAGE as e:
        raise InvalidInput(
            "archive",
            f"the zip archive is cut short or damaged: its directory is unreadable ({e})",
        ) from None
    with archive:
        infos = _counted(archive.infolist())
        for info in infos:
            _check_path(info.filename)
            if (info.external_attr >> 16) & 0o170000 == 0o120000:  # S_IFLNK in the Unix mode
                raise InvalidInput("archive", f"{info.filename} is a link: only plain files")
        _check_total(sum(info.file_size for info in infos))
        for info in infos:
            if not info.is_dir():
                yield info.filename, _text(info.filename, _zip_read(archive, info))


def _zip_read(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes, at most what its header says; its CRC is checked at its end."""
    try:
        with archive.open(info) as stream:
            return stream.read(MAX_FILE_BYTES + 1)
    except NotImplementedError:
        raise InvalidInput(
            "archive", f"{info.filename} is compressed in a way benchdash cannot read: use deflate"
        ) from None
    except RuntimeError:  # zipfile's word for a member that needs a password
        raise InvalidInput(
            "archive", f"{info.filename} is encrypted: upload it without a password"
        ) from None
    except _DAMAGE as e:
        raise InvalidInput(
            "archive", f"the zip archive is damaged at {info.filename} ({e})"
        ) from None


def _counted(infos: list[tarfile.TarInfo] | list[zipfile.ZipInfo]) -> list:
    if len(infos) > MAX_FILES:
        raise InvalidInput("archive", f"the archive holds more than {MAX_FILES} files")
    return infos


def _check_path(path: str) -> None:
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        raise InvalidInput("archive", f"{path} is an absolute path: refused")
    if ".." in parts:
        raise InvalidInput("archive", f"{path} climbs out of the archive with '..': refused")


def _one_line(error: BaseException) -> str:
    """tarfile lists what each method said on lines of their own."""
    return " ".join(str(error).split())


def _check_total(total: int) -> None:
    if total > MAX_TOTAL_BYTES:
        raise InvalidInput(
            "archive", f"the archive unpacks to more than {MAX_TOTAL_BYTES} bytes: refused"
        )


def _text(path: str, raw: bytes) -> str:
    if len(raw) > MAX_FILE_BYTES:
        raise InvalidInput("archive", f"{path} is larger than {MAX_FILE_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        if path.endswith(".lua"):
            raise InvalidInput("archive", f"{path} is not UTF-8 text") from None
        return ""  # a binary file beside the scripts: skipped anyway


def _flattened(paths: list[str]) -> dict[str, str]:
    """Each member's path → its name in the flat bundle: one top directory shared by all
    is taken off; a Lua file deeper than that is refused."""
    clean = [p.removeprefix("./") for p in paths]
    tops = {p.split("/", 1)[0] for p in clean}
    strip = len(tops) == 1 and all("/" in p for p in clean)
    result = {}
    for original, path in zip(paths, clean, strict=True):
        name = path.split("/", 1)[1] if strip else path
        if "/" in name and name.endswith(".lua"):
            raise InvalidInput(
                "archive", f"{path} is in a subdirectory: a bundle's Lua files sit side by side"
            )
        result[original] = name
    return result
