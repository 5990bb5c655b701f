"""What a process holds of the stored answers (runs/services/answers/held.py): the parts
read last, within their bounds, the oldest let go first."""

from __future__ import annotations

import pytest

from runs.services.answers import held


@pytest.fixture(autouse=True)
def nothing_held():
    held.forget_all()
    yield
    held.forget_all()


def test_a_part_held_is_found_by_its_etag_and_part_only():
    held.keep("v1-abc", "html", "<p>page</p>", 11)

    assert held.value("v1-abc", "html") == "<p>page</p>"
    assert held.value("v1-abc", "results") is held.MISSING
    assert held.etags("html") == ["v1-abc"]
    assert held.etags("side") == []


def test_the_parts_read_longest_ago_make_room_within_the_bounds(monkeypatch):
    monkeypatch.setattr(held, "HELD_CHARS", 400)
    for n in range(4):
        held.keep(f"e{n}", "html", f"page {n}", 100)
    assert held.value("e0", "html") == "page 0"  # read again: now the newest

    held.keep("e4", "html", "page 4", 100)

    assert held.value("e1", "html") is held.MISSING  # the oldest read
    assert sorted(held.etags("html")) == ["e0", "e2", "e3", "e4"]
    monkeypatch.setattr(held, "HELD_PARTS", 2)
    held.keep("e5", "html", "page 5", 1)
    assert sorted(held.etags("html")) == ["e4", "e5"]


def test_an_answer_too_large_to_share_the_room_is_not_held(monkeypatch):
    monkeypatch.setattr(held, "HELD_CHARS", 400)
    held.keep("small", "html", "page", 100)

    held.keep("giant", "html", "x" * 101, 101)

    assert held.value("giant", "html") is held.MISSING
    assert held.value("small", "html") == "page"
