"""JSON text by orjson, with the standard library's values: what the pages' scripts read
(runs/web/templatetags/json_data.py) and what a stored answer keeps
(runs/services/answers/stored_results.py).

orjson writes a 200-run batch's answer in a tenth of the standard library's time. What it
writes differs from json.dumps only in its text: no spaces after the separators, text
outside ASCII as itself, floats in their shortest form (also as keys: "1e-05" is
"0.00001"), and NaN or infinity as null (JSON has neither). A dataclass is written as
its fields (not what else its instance holds: a cached property's value), dates, times
and what else orjson does not know (Decimal, UUID, lazy text) by Django's encoder, as
json.dumps with it writes them (datetimes to the millisecond, UTC as Z); keys that are
numbers, booleans or None become text as json.dumps makes them. JSONText, JSON made
elsewhere (the timeline's points, made by PostgreSQL), is written as it is.

What orjson refuses (an integer wider than 64 bits, nesting deeper than 254, a lone
surrogate) raises EncodeError: the caller writes it with Encoder, the standard library's
way, which reads the same values.
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from typing import Any

import orjson
from django.core.serializers.json import DjangoJSONEncoder

OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_NON_STR_KEYS
)
EncodeError = orjson.JSONEncodeError


class JSONText:
    """JSON text made elsewhere, written into a document as it is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def value(self) -> Any:
        return json.loads(self.text)


def dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_orjson_default, option=OPTIONS)


class Encoder(DjangoJSONEncoder):
    """The standard library's way to what dumps writes: Django's encoder, a dataclass as
    its fields, JSONText as the value it holds."""

    def default(self, o: Any) -> Any:
        if is_dataclass(o) and not isinstance(o, type):
            return _fields(o)
        if isinstance(o, JSONText):
            return o.value()
        return super().default(o)


_django_default = Encoder().default


def _orjson_default(o: Any) -> Any:
    if isinstance(o, JSONText):
        return orjson.Fragment(o.text)
    return _django_default(o)


def _fields(o: Any) -> dict[str, Any]:
    return {f.name: getattr(o, f.name) for f in fields(o)}
