# ruff: noqa: RUF001  (the times sign, as pages show it)
"""The bidirectional controls found in a page's UTF-8 bytes (runs/bidi.py) are those found
in its text, every one of them and nothing else; the `benchdash` command, which may not
import runs, shows the same characters the same way."""

from __future__ import annotations

from benchdash_cli.answer import bidi_shown as cli_bidi_shown
from runs.bidi import BIDI_CONTROLS, BIDI_CONTROLS_UTF8, bidi_shown


def test_the_utf8_pattern_finds_the_characters_the_text_pattern_finds():
    for code in [*range(0xD800), *range(0xE000, 0x10000), 0x1F600, 0x10FFFF]:
        char = chr(code)
        assert bool(BIDI_CONTROLS_UTF8.search(char.encode())) == bool(BIDI_CONTROLS.search(char))


def test_a_control_is_found_among_other_multibyte_text():
    text = "flush=2 → 2.2× faster, é ü ✓ " * 100
    assert not BIDI_CONTROLS_UTF8.search(text.encode())
    assert BIDI_CONTROLS_UTF8.search((text + "\u202e" + text).encode())


def test_the_command_shows_the_characters_the_pages_show_as_they_show_them():
    every = "".join(chr(code) for code in [*range(0xD800), *range(0xE000, 0x10000)])

    assert cli_bidi_shown(every) == bidi_shown(every)
    assert bidi_shown(every) != every  # there were controls to show
