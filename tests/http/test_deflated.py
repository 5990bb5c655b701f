"""A stored part compressed once and spliced between a header and a footer compressed
for each response: the result is one gzip stream of the three, its checksum and length
those of the whole (gzip.decompress checks both)."""

from __future__ import annotations

import gzip
import random
import zlib

import pytest

from runs.http import deflated


def some_bytes(rng: random.Random, size: int) -> bytes:
    """Text that repeats itself (what deflate refers back into) and bytes that do not."""
    words = [b"<tr>", b'<td class="num">', b"1,234.5", b"\xc3\xa9", b"\n", b"tps"]
    text = b"".join(rng.choice(words) for _ in range(size // 4))[:size]
    return text + rng.randbytes(size // 10)


CASES = [(0, 0, 0), (0, 5000, 0), (3000, 0, 1000), (1, 1, 1), (2500, 330_000, 900)]


@pytest.mark.parametrize(("head_size", "middle_size", "tail_size"), CASES)
def test_the_spliced_stream_is_the_gzip_of_the_three(head_size, middle_size, tail_size):
    rng = random.Random(head_size + middle_size + tail_size)
    head, data, tail = (some_bytes(rng, n) for n in (head_size, middle_size, tail_size))
    middle = deflated.deflated(data)

    sent = deflated.gzipped_around(head, middle, tail, max_random_bytes=100)

    assert gzip.decompress(sent) == head + data + tail
    stream = zlib.decompressobj(wbits=31)  # what a browser's inflater does: one stream
    assert stream.decompress(sent) + stream.flush() == head + data + tail
    assert stream.eof and stream.unused_data == b""


def test_the_same_part_is_sent_around_many_headers():
    rng = random.Random(7)
    data = some_bytes(rng, 50_000)
    middle = deflated.deflated(data)
    for user in ("ana", "bo", "<é>"):
        head, tail = f"<header>{user}</header>".encode(), b"</html>"
        assert gzip.decompress(deflated.gzipped_around(head, middle, tail, 100)) == (
            head + data + tail
        )


def test_a_whole_body_is_compressed_with_a_name_of_random_length():
    data = some_bytes(random.Random(3), 20_000)

    sent = [deflated.gzipped(data, max_random_bytes=100) for _ in range(20)]

    assert all(gzip.decompress(s) == data for s in sent)
    assert all(s[3] & gzip.FNAME for s in sent)
    names = {s[10 : s.index(b"\0", 10)] for s in sent}
    assert len({len(n) for n in names}) > 1 and all(1 <= len(n) <= 100 for n in names)


def test_a_body_is_its_parts_only_byte_for_byte():
    head, data, tail = b"<header>", b"stored" * 100, b"</html>"
    middle = deflated.deflated(data)

    assert deflated.is_body_of(head + data + tail, head, middle, tail)
    same_length = head + data[:-1] + b"X" + tail  # a change that keeps the length
    assert not deflated.is_body_of(same_length, head, middle, tail)
    # ... in the head or the tail, or a byte moved from one part to the next
    assert not deflated.is_body_of(b"X" + head[1:] + data + tail, head, middle, tail)
    assert not deflated.is_body_of(head + data + tail[:-1] + b"X", head, middle, tail)
    assert not deflated.is_body_of(head[:-1] + data + tail + b"!", head, middle, tail)
    assert not deflated.is_body_of(head + data + tail + b" ", head, middle, tail)
    assert deflated.is_body_of(data, b"", middle, b"")
