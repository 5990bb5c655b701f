"""Template filters of the pages: numbers as people read them, and dictionary lookups;
and the tags that write the long tables' rows (rows.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import template

from runs.analysis import run_facts
from runs.columns import RunSummary
from runs.web.templatetags import json_data, results_tables, rows
from runs.web.templatetags.numbers import num, ratio

register = template.Library()


@register.filter
def lookup(mapping: Mapping[Any, Any] | Sequence[Any] | None, key: Any) -> Any:
    """`{{ values|lookup:name }}`: a mapping's value for a variable key (or a list's
    item at an index), or ""."""
    if not mapping:
        return ""
    if isinstance(mapping, Mapping):
        return mapping.get(key, "")
    return mapping[key] if isinstance(key, int) and 0 <= key < len(mapping) else ""


register.filter("num", num)
register.filter("ratio", ratio)
# `{{ chart|json_data:"results-data" }}`: json_script's element, encoded by orjson (json_data.py).
register.filter("json_data", json_data.json_data, is_safe=True)


@register.filter
def pct(value: Any) -> str:
    """A signed percentage: +12.3 %, -4.0 %."""
    if value is None or value == "":
        return ""
    number = float(value)
    sign = "+" if number > 0 else ("-" if number < 0 else "±")
    return f"{sign}{abs(number):.1f} %"


@register.filter
def seconds(value: Any) -> str:
    if value is None or value == "":
        return ""
    total = int(float(value))
    if total < 120:
        return f"{total} s"
    if total < 7200:
        return f"{total // 60} min {total % 60:02d} s"
    return f"{total // 3600} h {total % 3600 // 60:02d} min"


@register.filter
def pvalue(value: Any) -> str:
    if value is None or value == "":
        return ""
    number = float(value)
    return "< 0.001" if number < 0.001 else f"{number:.3f}"


@register.filter
def run_status(run: Any) -> str:
    """`{{ run|run_status }}`: a run's status with a forced shutdown said, as the live
    batch page fills it in: "done (forced shutdown, 200 unfinished)"."""
    unfinished = RunSummary.load(run.summary).unfinished_transactions
    return run_facts.status_text(run.status, run.outcome, unfinished)


# The long tables' rows (rows.py): `{% runs_facts_rows results.runs link_base %}` ...
register.simple_tag(rows.runs_facts_rows)
register.simple_tag(rows.counters_rows)
register.simple_tag(rows.variables_rows)
register.simple_tag(rows.run_picker)
register.simple_tag(rows.batch_list_rows)
register.simple_tag(results_tables.report_table_rows)
register.simple_tag(results_tables.relative_rows)
