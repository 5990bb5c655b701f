"""A large text compressed once, and sent compressed around a page of its own each time.

A finished batch's results page is 330 kB of stored HTML in a header and footer of 3 kB
made for the person asking. gzip over the whole page, request after request, was 3.4 ms of
CPU, a quarter of what the page cost the server (docs/performance/pages.md). The stored
part is now deflated once, when the process first holds it (answers/held.py), and each
response is that part's deflate blocks spliced between the header's and the footer's,
compressed then: DEFLATE allows it when each piece ends on a byte boundary without a final
block, and no piece refers back into another (each has a compressor of its own). gzip's
trailer, the CRC-32 of the whole, is carried on from one piece to the next.

Bodies whose every byte is shared (the API's results) are sent the same way, with nothing
around them.
"""

from __future__ import annotations

import secrets
import zlib
from dataclasses import dataclass
from typing import Any

LEVEL = 1  # as whole responses are compressed (runs/web/middleware.py)
RAW = -zlib.MAX_WBITS  # a raw deflate stream: gzip's header and trailer are written here
# gzip's header: magic, deflate, FNAME set, no mtime, XFL 4 (the fastest level), "unknown" OS.
_HEADER = bytes([0x1F, 0x8B, 8, 0x08, 0, 0, 0, 0, 4, 255])


@dataclass(frozen=True)
class Deflated:
    """`data` with its deflate blocks (ending on a byte boundary, none of them final):
    what a response needs to send it compressed within other bytes. (gzip's CRC-32 of the
    whole is taken over `data` again for each response: 0.2 ms for 330 kB; Python's zlib
    has no crc32_combine.)"""

    data: bytes
    blocks: bytes


def deflated(data: bytes) -> Deflated:
    return Deflated(data, _blocks(data, zlib.Z_SYNC_FLUSH))


EMPTY = Deflated(b"", b"")


def with_deflated(response: Any, head: bytes, middle: Deflated, tail: bytes) -> Any:
    """`response`, whose body is head + middle.data + tail, to be compressed around
    `middle`'s blocks rather than all of it again (runs/web/middleware.py)."""
    response.deflated_parts = (head, middle, tail)
    return response


def parts_of(response: Any) -> tuple[bytes, Deflated, bytes] | None:
    return getattr(response, "deflated_parts", None)


def is_body_of(content: bytes, head: bytes, middle: Deflated, tail: bytes) -> bool:
    """Whether `content` is head + middle.data + tail, compared in place by startswith (a
    memcmp: 13 us for 330 kB, where a memoryview's == compared byte by byte in 700 us)."""
    if len(content) != len(head) + len(middle.data) + len(tail):
        return False
    return (
        content.startswith(head)
        and content.startswith(middle.data, len(head))
        and content.endswith(tail)
    )


def forget_parts(response: Any) -> None:
    """For a middleware that changes the body: its parts are not its parts any more."""
    response.deflated_parts = None


def gzipped(data: bytes, max_random_bytes: int) -> bytes:
    """The gzip of `data`, all of it compressed now."""
    return gzipped_around(data, EMPTY, b"", max_random_bytes)


def gzipped_around(head: bytes, middle: Deflated, tail: bytes, max_random_bytes: int) -> bytes:
    """The gzip of head + middle.data + tail, compressing only head and tail.

    The header names a file of a random length, as Django's GZipMiddleware does against
    BREACH (runs/web/middleware.py)."""
    crc = zlib.crc32(tail, zlib.crc32(middle.data, zlib.crc32(head)))
    size = len(head) + len(middle.data) + len(tail)
    return b"".join(
        (
            _HEADER,
            _random_name(max_random_bytes),
            _blocks(head, zlib.Z_SYNC_FLUSH),
            middle.blocks,
            _blocks(tail, zlib.Z_FINISH),
            crc.to_bytes(4, "little"),
            (size & 0xFFFFFFFF).to_bytes(4, "little"),
        )
    )


def _blocks(data: bytes, flush: int) -> bytes:
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, RAW)
    return compressor.compress(data) + compressor.flush(flush)


def _random_name(max_random_bytes: int) -> bytes:
    """A file name of 1 to max_random_bytes characters and its NUL, from one read of the
    system's randomness."""
    length = 1 + secrets.randbelow(max_random_bytes)
    return secrets.token_hex(-(-length // 2))[:length].encode() + b"\0"
