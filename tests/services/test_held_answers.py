"""What a process holds of the stored answers (runs/services/held_answers.py): the parts
read last, within their bounds, the oldest let go first."""

from __future__ import annotations

import pytest

from runs.services import held_answers


@pytest.fixture(autouse=True)
def nothing_held():
    held_answers.forget_all()
    yield
    held_answers.forget_all()


def test_a_part_held_is_found_by_its_etag_and_part_only():
    held_answers.hold("v1-abc", "html", "<p>page</p>", 11)

    assert held_answers.held("v1-abc", "html") == "<p>page</p>"
    assert held_answers.held("v1-abc", "results") is held_answers.MISSING
    assert held_answers.held_etags("html") == ["v1-abc"]
    assert held_answers.held_etags("side") == []


def test_the_parts_read_longest_ago_make_room_within_the_bounds(monkeypatch):
    monkeypatch.setattr(held_answers, "HELD_CHARS", 400)
    for n in range(4):
        held_answers.hold(f"e{n}", "html", f"page {n}", 100)
    assert held_answers.held("e0", "html") == "page 0"  # read again: now the newest

    held_answers.hold("e4", "html", "page 4", 100)

    assert held_answers.held("e1", "html") is held_answers.MISSING  # the oldest read
    assert sorted(held_answers.held_etags("html")) == ["e0", "e2", "e3", "e4"]
    monkeypatch.setattr(held_answers, "HELD_PARTS", 2)
    held_answers.hold("e5", "html", "page 5", 1)
    assert sorted(held_answers.held_etags("html")) == ["e4", "e5"]


def test_an_answer_too_large_to_share_the_room_is_not_held(monkeypatch):
    monkeypatch.setattr(held_answers, "HELD_CHARS", 400)
    held_answers.hold("small", "html", "page", 100)

    held_answers.hold("giant", "html", "x" * 101, 101)

    assert held_answers.held("giant", "html") is held_answers.MISSING
    assert held_answers.held("small", "html") == "page"
