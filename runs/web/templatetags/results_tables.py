# ruff: noqa: RUF001  (the cells show the en dash, as the templates did)
"""The rows of the results page's report table and relative table, written without the
template engine.

Written by the engine they were 4 of the 10 ms that rendering a 200-run results page cost:
the report table's 20 rows include the verdict cell's template each, and every lookup of
the relative table's cells (dataclasses) first tried them as dictionaries and caught the
error. These write the same HTML, byte for byte (tests/web/test_results_tables.py renders
both and compares them); the tables' heads stay in the templates. The verdict cell of the
compare page is still templates/runs/_results_verdict_cell.html, which _verdict_cells
writes as it does (the same test holds them together).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.template.defaultfilters import floatformat
from django.utils.formats import localize
from django.utils.safestring import SafeString, mark_safe

from runs.analysis.host_metrics.host_summary import PER_TX, PerTx
from runs.analysis.relative import Family, RelativeTable, Row, TableCell
from runs.web.templatetags.numbers import num, ratio
from runs.web.templatetags.rows import escaped

SAME = "no significant difference"
GROUP_START = ' class="group-start"'
FORCED = (
    ' <span class="badge warn" title="sysbench stopped the threads at --time '
    '(--forced-shutdown); the results stand">'
)


def report_table_rows(rows: Iterable[Mapping[str, Any]]) -> SafeString:
    """templates/runs/_results_table.html's rows: a cell a row, BatchResults.table's dicts."""
    return mark_safe("".join(_report_row(r) for r in rows))  # noqa: S308


def _report_row(row: Mapping[str, Any]) -> str:
    p, first, baseline = row["point"], row["first_of_threads"], row["is_baseline"]
    threads = (
        f'<td class="num" rowspan="{_shown(row["rows_for_threads"])}">'
        f"<strong>{_shown(row['threads'])}</strong></td>"
        if first
        else ""
    )
    return (
        f'\n  <tr class="{"group-start" if first else ""}{" baseline" if baseline else ""}">\n'
        f"    {threads}\n"
        f'    <td><span class="swatch" style="background: {_shown(row["series"]["colour"])}">'
        f"</span>{_shown(row['series']['label'])}</td>\n"
        f'    <td class="num">{_num(p["mean"])}</td>\n'
        f'    <td class="num muted">{_range(p)}</td>\n'
        f'    <td class="num">{_num(p["qps"])}</td>\n'
        f'    <td class="num">{_num(p["latency_ms"])}</td>\n'
        f'    <td class="num">{_errors(p)}</td>\n'
        f'    <td class="num">{_ratio(row)}</td>\n'
        f'    <td class="num">{_shown(p["n"])}</td>\n'
        f"    {_verdict_cells(row['verdict'], baseline)}\n"
        "  </tr>\n  "
    )


def _range(p: Mapping[str, Any]) -> str:
    try:
        several = p["n"] > 1
    except TypeError:  # `{% if n > 1 %}` is false when n is None
        several = False
    return f"{_num(p['low'])}–{_num(p['high'])}" if several else ""


def _errors(p: Mapping[str, Any]) -> str:
    errors = p["errors"]
    text = (
        f'<span class="error">{floatformat(errors, 0)}</span>'
        if errors
        else ("0" if errors is not None else "")
    )
    if p["failed"]:
        text += f' <span class="badge bad">{_shown(p["failed"])} failed</span>'
    if p["forced_shutdowns"]:
        text += (
            f"{FORCED}{_shown(p['forced_shutdowns'])} forced shutdown, "
            f"{_shown(p['unfinished'])} unfinished</span>"
        )
    return text


def _ratio(row: Mapping[str, Any]) -> str:
    if row["is_baseline"]:
        return '<span class="muted">1.00</span>'
    return ratio(row["ratio"])


def _verdict_cells(v: Mapping[str, Any] | None, is_baseline: Any) -> str:
    """As templates/runs/_results_verdict_cell.html writes a verdict dict's two cells (the
    branch's text, then the template file's last newline)."""
    if is_baseline:
        return '<td class="muted">baseline</td><td></td>\n\n'
    if not v:
        return "<td></td><td></td>\n"
    verdict = v.get("verdict")
    tone = "good" if verdict == "faster" else ("bad" if verdict == "slower" else "")
    caveat = f' title="{_shown(v.get("caveat", ""))}"' if v.get("caveat") else ""
    power = f' <div class="help power">{_shown(v["power"])}</div>' if v.get("power") else ""
    intervals = (
        f' <span class="help" title="{_shown(v.get("caveat", ""))}">from intervals</span>'
        if v.get("basis") == "intervals"
        else ""
    )
    interval = (
        f' <span class="muted">({_shown(v["interval"])})</span>'
        if v.get("interval") and verdict != SAME
        else ""
    )
    return (
        f'<td class="verdict"><span class="badge {tone}"{caveat}>{_shown(v.get("text", ""))}'
        f"</span>{power}{intervals}</td>\n"
        f'<td class="num">{_shown(v.get("difference", ""))}{interval}</td>\n\n'
    )


def relative_rows(relative: RelativeTable) -> SafeString:
    """templates/runs/_results_relative.html's rows: a row a test (or cell), by family."""
    return mark_safe(  # noqa: S308
        "".join(_relative_row(f, row, i == 0) for f in relative.families
                for i, row in enumerate(f.rows))
    )  # fmt: skip


def _relative_row(family: Family, row: Row, first: bool) -> str:
    name = (
        f'<td rowspan="{len(family.rows)}"><strong>{_shown(family.name)}</strong></td>'
        if first
        else ""
    )
    cells = "".join(_relative_cell(c, i == 0) for i, c in enumerate(row.cells))
    return (
        f"\n  <tr{GROUP_START if first else ''}>\n"
        f"    {name}\n"
        f"    <td>{_shown(row.label)}</td>\n"
        f"    {cells}\n"
        "  </tr>\n  "
    )


def _relative_cell(cell: TableCell, first: bool) -> str:
    v, tone, t, q = cell.verdict, cell.tone, cell.per_tx, cell.per_query
    style = f' style="background: {_shown(tone)}"' if tone else ""
    title = ""
    if v:
        title = (
            f' title="{_shown(v.text)}'
            f"{', 95 % CI ' + _shown(v.interval) if v.interval else ''}"
            f"{'; ' + _shown(v.correction) if v.correction else ''}"
            f'{"; " + _shown(v.caveat) if v.caveat else ""}"'
        )
    if first:
        shown = _num(cell.throughput)
    elif v:
        shown = f"{ratio(v.ratio)}<br><small>{_shown(v.interval)} · {_shown(v.text)}</small>"
    else:
        shown = '<span class="muted">–</span>'
    queries = _num(cell.qps) if first else ratio(cell.rqps)
    costs = "".join(
        f'<td class="num"{_io_title(t) if name in IO_COSTS else ""}>'
        f'<span class="per-tx">{_num(getattr(t, name))}</span>'
        f'<span class="per-query">{_num(getattr(q, name))}</span></td>'
        for name in PER_TX
    )
    return (
        f'\n    <td class="num group-start"{style}{title}>\n      {shown}</td>\n'
        f'    <td class="num">{queries}</td>{costs}\n    '
    )


IO_COSTS = ("read_kb", "write_kb")


def _io_title(per_tx: PerTx) -> str:
    """Whose I/O a cell's KB are: a table may hold both when some cells' server could not
    be read (the heading says "mixed"); the machine's disks carry the neighbours' too."""
    if not per_tx.io_source:
        return ""
    why = f" ({per_tx.io_why})" if per_tx.io_why else ""
    return f' title="{_shown(per_tx.io_source + why)}" data-io="{_shown(per_tx.io_source)}"'


def _num(value: Any) -> str:
    """As `{{ value|num }}` writes it."""
    return escaped(num(value))


def _shown(value: Any) -> str:
    """As `{{ value }}` writes it: localized (a float by Django's number format), escaped."""
    if type(value) is int:  # Django's number format writes an int as str() does
        return str(value)
    return escaped(localize(value))
