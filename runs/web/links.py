"""The pages' links to other pages and to the static files every page loads, found once a
process rather than on every page.

`{% url %}` and `{% static %}` cost 40-90 µs of CPU each (a reversal, then escaping and
quoting), and the header of every page held 20 of them: 1-2 ms a page, against 8 to 10 ms
for a batch list or a stored results page (docs/performance/load.md). A link without
arguments is the same on every page of a process, once the script prefix it is served
under is known: `{{ links.home }}` is reversed the first time it is asked for under that
prefix, then read. Links with arguments, and the files of one page, keep their tags.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.templatetags.static import static
from django.urls import get_script_prefix, reverse

# A URL name a template variable cannot spell: {{ links.api_docs }}.
SPELLED = {"api_docs": "api-docs", "admin_index": "admin:index"}
# The static files of every page, by the name the templates give them.
FILES = {
    "css": "css/benchdash.css",
    "js": "js/",
    "chart_js": "vendor/chart.js/dist/chart.js",
    "chart_js_auto": "vendor/chart.js/auto/auto.js",
    "chart_js_helpers": "vendor/chart.js/helpers/helpers.js",
    "kurkle_color": "vendor/@kurkle/color/dist/color.esm.js",
    "error_bars": "vendor/chartjs-chart-error-bars/build/index.js",
    "annotation": "vendor/chartjs-plugin-annotation/dist/chartjs-plugin-annotation.esm.js",
}


class Found(dict[str, str]):
    """Each link found the first time it is asked for, then kept."""

    def __init__(self, find: Callable[[str], str]) -> None:
        super().__init__()
        self.find = find

    def __missing__(self, name: str) -> str:
        found = self[name] = self.find(name)
        return found


def links(request: HttpRequest) -> dict[str, Any]:
    """Context processor: `links` (pages, by URL name) and `files` (FILES)."""
    return {"links": _pages(get_script_prefix()), "files": _files(get_script_prefix())}


@cache
def _pages(prefix: str) -> Found:
    return Found(lambda name: reverse(SPELLED.get(name, name)))


@cache
def _files(prefix: str) -> Found:
    return Found(_file)


def _file(name: str) -> str:
    if name not in FILES:  # a KeyError would be a blank URL: the template engine eats it
        raise ImproperlyConfigured(f"no file {name!r} in FILES of runs/web/links.py")
    return static(FILES[name])
