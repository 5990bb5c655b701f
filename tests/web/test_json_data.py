"""The json_data filter (runs/web/templatetags/json_data.py) writes the element Django's
json_script writes, with data that JSON.parse reads the same: escaped the same way, dates
and what orjson does not know written by Django's encoder."""

from __future__ import annotations

import datetime
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from django.template import Context, Template
from django.utils.html import json_script
from django.utils.translation import gettext_lazy

from runs import json_text
from runs.json_text import JSONText
from runs.web.templatetags.json_data import json_data

ELEMENT = re.compile(r'<script id="data" type="application/json">(.*)</script>', re.S)
UTC = datetime.UTC


def data_of(element: str) -> object:
    match = ELEMENT.fullmatch(element)
    assert match, element
    return json.loads(match.group(1))


def test_markup_in_text_is_escaped_as_json_script_escapes_it() -> None:
    text = '</script><script>alert("x") & <!-- a > b'
    element = json_data({"label": text}, "data")
    assert element == json_script({"label": text}, "data").replace('{"label": ', '{"label":')
    inner = ELEMENT.fullmatch(element).group(1)  # type: ignore[union-attr]
    assert "<" not in inner and ">" not in inner and "&" not in inner
    assert "\\u003C/script\\u003E" in inner and "\\u0026" in inner
    assert data_of(element) == {"label": text}


def test_datetimes_read_as_json_script_writes_them() -> None:
    value = {
        "at": datetime.datetime(2026, 11, 27, 19, 5, 7, 123456, tzinfo=UTC),
        "whole": datetime.datetime(2026, 11, 27, 19, 5, 7, tzinfo=UTC),
        "day": datetime.date(2026, 11, 27),
        "took": datetime.timedelta(seconds=90),
    }
    assert data_of(json_data(value, "data")) == data_of(json_script(value, "data"))
    assert data_of(json_data(value, "data"))["at"] == "2026-11-27T19:05:07.123Z"  # type: ignore[index]


@dataclass
class Point:
    threads: int
    value: float


def test_what_orjson_does_not_know_goes_to_djangos_encoder() -> None:
    value = {"rate": Decimal("12.50"), "label": gettext_lazy("done"), "keys": {1: "a", None: "b"}}
    assert data_of(json_data(value, "data")) == data_of(json_script(value, "data"))
    assert data_of(json_data(Point(8, 1.5), "data")) == {"threads": 8, "value": 1.5}
    # An integer wider than 64 bits: json_script itself writes it.
    assert json_data([2**70], "data") == json_script([2**70], "data")


def test_floats_read_the_same_and_nan_is_null() -> None:
    floats = [0.1, 1e-05, 123456.789, -0.0, 1e300, 2.5e-310]
    assert data_of(json_data(floats, "data")) == floats
    # json_script wrote NaN, which JSON.parse refuses; null is what JavaScript can read.
    element = json_data([math.nan, math.inf], "data")
    assert ELEMENT.fullmatch(element).group(1) == "[null,null]"  # type: ignore[union-attr]


def test_in_a_template_with_and_without_an_id() -> None:
    ours = Template("{% load benchdash %}{{ v|json_data:name }}{{ v|json_data:'' }}")
    djangos = Template("{{ v|json_script:name }}{{ v|json_script:'' }}")
    context = {"v": [1, "x"], "name": 'a&"b'}
    assert ours.render(Context(context)) == djangos.render(Context(context)).replace(", ", ",")
    assert ours.render(Context(context)).startswith('<script id="a&amp;&quot;b" type=')


@dataclass(frozen=True)
class Line:
    name: str
    points: list[list[float]]

    @cached_property
    def peak(self) -> float:
        return max(y for _, y in self.points)


def test_json_text_made_elsewhere_goes_in_as_it_is_and_a_dataclass_as_its_fields() -> None:
    line = Line("flush=1", [[1.0, 5.0]])
    assert line.peak == 5.0  # cached on the instance: not one of its fields
    made = JSONText("[[31.5, 20.0], [32.5, 21.0]]")
    value = {"line": line, "timeline": [{"run": 7, "points": made}]}
    expected = {"line": {"name": "flush=1", "points": [[1.0, 5.0]]},
                "timeline": [{"run": 7, "points": [[31.5, 20.0], [32.5, 21.0]]}]}  # fmt: skip
    assert data_of(json_data(value, "data")) == expected
    # What orjson refuses (an integer wider than 64 bits) beside them: the same values,
    # written the standard library's way.
    wide = {**value, "rows": 2**70}
    assert data_of(json_data(wide, "data")) == {**expected, "rows": 2**70}
    assert json.loads(json_text.dumps(value)) == expected
