"""The pages' data for their scripts, as Django's json_script writes it but encoded by orjson.

`{{ chart|json_data:"results-data" }}` writes `<script id="results-data"
type="application/json">…</script>`, escaped as json_script escapes it (`<`, `>` and `&`
as \\u003C, \\u003E, \\u0026, so no text in the data can close the element or start a
comment). Django's encoder, the standard library's json, took 8 of the 18 ms that
rendering a 200-run results page cost; orjson writes the same data in a tenth of that.

What the scripts read (JSON.parse) is the same; the text differs as runs/json_text.py
says (NaN and infinity are null, which JSON.parse reads: json_script wrote NaN, on which
it throws). A value orjson refuses (an integer wider than 64 bits) is written by
json_script itself, with the same values.
"""

from __future__ import annotations

from typing import Any

from django.utils.html import conditional_escape, json_script
from django.utils.safestring import SafeString, mark_safe

from runs import json_text

# json_script's escapes (django.utils.html._json_script_escapes), applied to the bytes.
ESCAPES = ((b"<", b"\\u003C"), (b">", b"\\u003E"), (b"&", b"\\u0026"))


def json_data(value: Any, element_id: str | None = None) -> SafeString:
    """`value` as JSON in a script element of id `element_id` (none when it is empty)."""
    try:
        text = _escaped(json_text.dumps(value))
    except json_text.EncodeError:  # what orjson refuses, the standard library's way
        return json_script(value, element_id, encoder=json_text.Encoder)
    if element_id:
        return mark_safe(  # noqa: S308  (the id escaped, the JSON's markup characters too)
            f'<script id="{conditional_escape(element_id)}" type="application/json">{text}</script>'
        )
    return mark_safe(f'<script type="application/json">{text}</script>')  # noqa: S308


def _escaped(data: bytes) -> str:
    """The JSON's text with its markup characters escaped, as json_script escapes them:
    bytes.replace is many times faster than str.translate over the text."""
    for char, escape in ESCAPES:
        if char in data:
            data = data.replace(char, escape)
    return data.decode()
