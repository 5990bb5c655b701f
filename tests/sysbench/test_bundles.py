"""Lua bundles: files and archives read, and hostile archives refused as a whole."""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
import zipfile
from pathlib import Path

import pytest

from runs.errors import InvalidInput
from runs.sysbench import bundles

TPCC_LIKE = Path(__file__).parent.parent / "fixtures" / "lua" / "tpcc_like"


def lua_files() -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(TPCC_LIKE.glob("*.lua"))}


def tar_gz(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def zipped(
    members: list[tuple[str, bytes]],
    link: str | None = None,
    compression: int = zipfile.ZIP_DEFLATED,
) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = 0o120777 << 16  # a symbolic link, as Info-ZIP stores one
            archive.writestr(info, "/etc/passwd")
    return out.getvalue()


def the_bundle_as_members(prefix: str = "") -> list[tarfile.TarInfo | tuple[str, bytes]]:
    return [(prefix + name, text.encode()) for name, text in lua_files().items()]


def test_the_entry_is_the_file_no_other_file_requires():
    bundle = bundles.bundle_from_files(lua_files())

    assert bundle.entry == "tpcc_like.lua"
    assert sorted(bundle.files) == [
        "tpcc_like_check.lua",
        "tpcc_like_common.lua",
        "tpcc_like_run.lua",
    ]
    assert set(bundle.digests) == set(lua_files())
    assert all(len(digest) == 64 for digest in bundle.digests.values())


def test_a_tar_gz_with_a_top_directory_is_read_flat_and_its_other_files_skipped():
    data = tar_gz(
        [*the_bundle_as_members("sysbench-tpcc-main/"), ("sysbench-tpcc-main/README.md", b"# hi")]
    )

    bundle = bundles.bundle_from_archive(data)

    assert bundle.entry == "tpcc_like.lua"
    assert bundle.all_files == lua_files()
    assert bundle.skipped == ("sysbench-tpcc-main/README.md",)


def test_a_zip_is_read_too_and_the_entry_may_be_named():
    data = zipped([(name, text.encode()) for name, text in lua_files().items()])

    bundle = bundles.bundle_from_archive(data, entry="tpcc_like_run.lua")

    assert bundle.entry == "tpcc_like_run.lua"
    assert "tpcc_like.lua" in bundle.files


def link(name: str, target: str, hard: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
    info.linkname = target
    return info


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ([link("evil.lua", "/etc/passwd")], "evil.lua is a link"),
        ([link("evil.lua", "tpcc_like.lua", hard=True)], "evil.lua is a link"),
        ([("/tmp/evil.lua", b"x = 1")], "absolute path"),
        ([("../evil.lua", b"x = 1")], "climbs out"),
        ([("lib/../../evil.lua", b"x = 1")], "climbs out"),
        ([(f"f{i}.lua", b"x = 1") for i in range(bundles.MAX_FILES + 1)], "more than 64 files"),
        ([("big.lua", b"-" * (bundles.MAX_TOTAL_BYTES + 1))], "unpacks to more than"),
        ([("lib/deep/x.lua", b"x = 1"), ("y.lua", b"y = 1")], "in a subdirectory"),
    ],
)
def test_hostile_tar_archives_are_refused(members, words):
    data = tar_gz([*the_bundle_as_members(), *members])

    with pytest.raises(InvalidInput, match=words) as refused:
        bundles.bundle_from_archive(data)

    assert refused.value.field == "archive"


def test_a_device_in_a_tar_is_refused():
    device = tarfile.TarInfo("dev.lua")
    device.type = tarfile.CHRTYPE

    with pytest.raises(InvalidInput, match="special file"):
        bundles.bundle_from_archive(tar_gz([device]))


def test_a_tar_whose_header_lies_small_is_stopped_at_the_bound():
    """Sizes are summed from the headers as they come, before any member is inflated:
    many members each under the file bound still add up past the total bound."""
    size = bundles.MAX_FILE_BYTES - 1
    members: list[tarfile.TarInfo | tuple[str, bytes]] = [
        (f"m{i}.lua", b"-" * size) for i in range(5)
    ]

    with pytest.raises(InvalidInput, match="unpacks to more than"):
        bundles.bundle_from_archive(tar_gz(members))


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (zipped([("ok.lua", b"x = 1")], link="evil.lua"), "evil.lua is a link"),
        (zipped([("/abs.lua", b"x = 1")]), "absolute path"),
        (zipped([("../up.lua", b"x = 1")]), "climbs out"),
        (zipped([(f"f{i}.lua", b"x = 1") for i in range(65)]), "more than 64 files"),
        (zipped([("big.lua", b"-" * (bundles.MAX_TOTAL_BYTES + 1))]), "unpacks to more than"),
        (b"\x1f\x8b not really gzip", "not a tar.gz"),
        (b"-" * (bundles.MAX_ARCHIVE_BYTES + 1), "archive is larger"),
    ],
)
def test_hostile_or_broken_zip_archives_are_refused(data, words):
    with pytest.raises(InvalidInput, match=words):
        bundles.bundle_from_archive(data)


@pytest.mark.parametrize(
    ("files", "entry", "field", "words"),
    [
        ({}, "", "files", "at least one"),
        ({"a.lua": "x = 1", "b.lua": "y = 1"}, "", "entry", "name the entry script"),
        ({"a.lua": "x = 1"}, "b.lua", "entry", "not among the files"),
        ({"a b.lua": "x = 1"}, "", "files", "not a Lua file name"),
        ({"notes.txt": "x = 1"}, "", "files", "not a Lua file name"),
        ({"benchdash-probe.lua": "x = 1"}, "", "files", "not starting with"),
        ({"a.lua": "  "}, "", "files", "empty"),
        ({"a.lua": "a\0b"}, "", "files", "NUL byte"),
    ],
)
def test_bad_files_are_refused_naming_the_field(files, entry, field, words):
    with pytest.raises(InvalidInput, match=words) as refused:
        bundles.bundle_from_files(files, entry)

    assert refused.value.field == field


# --- damaged archives: built whole, then their bytes patched ------------------------------

ONE_LUA = [("a.lua", b"function event() end\n" * 50)]


def patched(data: bytes, *patches: tuple[int, str, int]) -> bytes:
    """`data` with each (offset, struct format, value) written over it."""
    out = bytearray(data)
    for offset, fmt, value in patches:
        struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def central(data: bytes) -> int:
    """Where the zip's central directory (the headers zipfile reads) starts."""
    return data.rfind(b"PK\x01\x02")


def lying_zip(compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip whose size headers, local and central, say 5 bytes for a file of 1050."""
    data = zipped(ONE_LUA, compression=compression)
    return patched(data, (22, "<I", 5), (central(data) + 24, "<I", 5))


def tar_with_size(size: int) -> bytes:
    """A tar.gz of one member whose header says `size`, its checksum made right again."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        info = tarfile.TarInfo("a.lua")
        info.size = len(ONE_LUA[0][1])
        archive.addfile(info, io.BytesIO(ONE_LUA[0][1]))
    header = bytearray(out.getvalue())
    header[124:136] = b"%011o\0" % size
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header[:512])
    return gzip.compress(bytes(header))


ZIP = zipped(ONE_LUA)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (lying_zip(), r"damaged at a\.lua \(Bad CRC-32"),
        (lying_zip(zipfile.ZIP_STORED), r"damaged at a\.lua \(Bad CRC-32"),
        (patched(ZIP, (central(ZIP) + 16, "<I", 1234)), r"damaged at a\.lua \(Bad CRC-32"),
        (patched(ZIP, (26, "<H", 2)), r"damaged at a\.lua \(File name in directory"),
        (patched(ZIP, (28, "<H", 30)), r"damaged at a\.lua \(Error -3 while decompressing"),
        (patched(ZIP, (central(ZIP) + 42, "<I", 10**6)), r"damaged at a\.lua \(Truncated"),
        (patched(ZIP, (central(ZIP) + 8, "<H", 1)), r"a\.lua is encrypted"),
        (patched(ZIP, (central(ZIP) + 10, "<H", 99)), r"a\.lua is compressed in a way"),
        (ZIP[: len(ZIP) // 2], "zip archive is cut short or damaged"),
        (tar_with_size(500_000), r"archive is damaged \(unexpected end of data\)"),
        (tar_gz(the_bundle_as_members())[:300], r"archive is damaged \(Compressed file ended"),
    ],
    ids=[
        "zip-sizes-lie", "stored-zip-sizes-lie", "zip-bad-crc", "zip-local-name-length-lies",
        "zip-local-extra-length-lies", "zip-offset-past-the-end", "zip-encrypted",
        "zip-unknown-method", "zip-cut-short", "tar-size-lies", "tar-gz-cut-short",
    ],
)  # fmt: skip
def test_a_damaged_archive_is_refused_naming_the_damage(data, words):
    with pytest.raises(InvalidInput, match=words) as refused:
        bundles.bundle_from_archive(data)

    assert refused.value.field == "archive"
    assert "\n" not in refused.value.message
