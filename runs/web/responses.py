"""JSON answers of the pages, with <, > and & escaped as \\u003C... (still valid JSON):
a log line or a name holding `<script>` stays inert even if the answer is ever shown as
HTML."""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse

_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


def json_response(data: Any, *, indent: int | None = None, status: int = 200) -> HttpResponse:
    text = json.dumps(data, cls=DjangoJSONEncoder, indent=indent).translate(_ESCAPES)
    return HttpResponse(text, content_type="application/json", status=status)
