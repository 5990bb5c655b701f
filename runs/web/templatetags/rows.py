# ruff: noqa: RUF001  (the rows show the times sign, as the templates did)
"""The rows of the results' long tables, written without the template engine.

A results page of 200 runs has four tables of a row a run or a variable: each run's facts,
its server counters, the run picker, and the server's 650 variables. Written by the
template engine they were 52 of the 66 ms of CPU its first view spent rendering (some 26
variable lookups a row, two URL reversals a run). These write the same HTML, byte for byte,
escaped the same way (tests/web/test_rows.py renders both and compares them); the tables'
heads and everything around them stay in the templates.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from runs.web.templatetags.numbers import num

MARKER = 2147483647  # an id no run has: a run's link is this one's with its id


def runs_facts_rows(runs: Iterable[Mapping[str, Any]], link_base: str = "") -> SafeString:
    """templates/runs/_results_runs_table.html's rows: each run as sysbench reported it."""
    page, log = _link("run_live", link_base), _link("run_log", link_base)
    return mark_safe("".join(_run_facts_row(r, page, log) for r in runs))  # noqa: S308


def _run_facts_row(
    r: Mapping[str, Any], page: Callable[[Any], str], log: Callable[[Any], str]
) -> str:
    return (
        f'\n  <tr id="run-facts-{_e(r["id"])}">\n'
        f'    <td class="num">{_plus_one(r["position"])}</td>\n'
        f'    <td><span class="swatch" style="background: {_e(r["colour"])}"></span>'
        f"{_e(r['label'])}"
        f'<br><a href="{page(r["id"])}">run page</a> · <a href="{log(r["id"])}">raw log</a></td>\n'
        f"    <td>{_outcome(r)}\n"
        f"      {_error(r)}\n"
        f"      {_errors(r['errors'])}</td>\n"
        f'    <td class="num">{_rate(r)}</td>\n'
        f'    <td class="num">{num(r["qps"])}</td>\n'
        f'    <td class="num">{_queries(r["queries"])}</td>\n'
        f'    <td class="num">{_latency(r["latency"])}</td>\n'
        f'    <td class="num">{_percentile(r["latency"])}</td>\n'
        f'    <td class="num">{num(r["errors_per_s"])}</td>\n'
        f'    <td class="num">{num(r["reconnects_per_s"])}</td>\n'
        f"    <td>{_fairness(r['fairness'])}</td>\n"
        f"    <td>{_per_transaction(r['per_transaction'])}</td>\n"
        "  </tr>\n  "
    )


def _outcome(r: Mapping[str, Any]) -> str:
    if not r["outcome"]:
        return f'<span class="status {_e(r["status"])}">{_e(r["status"])}</span>'
    kind = {"forced_shutdown": "warning", "error": "error"}.get(r["outcome"], _e(r["status"]))
    return f'<span class="status {kind}">{_e(r["outcome_text"])}</span>'


def _error(r: Mapping[str, Any]) -> str:
    if r["error"] and not r["errors"] and r["outcome"] != "forced_shutdown":
        return f'<br><span class="error">{_e(_truncated(r["error"], 160))}</span>'
    return ""


def _errors(errors: Sequence[Mapping[str, Any]]) -> str:
    return "".join(
        f'<br><span class="mono" title="{_e(e["message"])}'
        f'{" — " + _e(e["hint"]) if e["hint"] else ""}">'
        f"{'error ' + _e(e['code']) if e['code'] else _e(e['kind'])} × {_e(e['count'])}</span>"
        for e in errors
    )


def _rate(r: Mapping[str, Any]) -> str:
    if r["tps"] is not None:
        return num(r["tps"])
    return f"{num(r['events_per_s'])} ev/s" if r["events_per_s"] is not None else ""


def _queries(queries: Mapping[str, Any] | None) -> str:
    if not queries:
        return ""
    return " / ".join(floatformat(queries.get(k, ""), "0g") for k in ("read", "write", "other"))


def _latency(latency: Mapping[str, Any] | None) -> str:
    if not latency:
        return ""
    return " / ".join(num(latency.get(k, "")) for k in ("min", "avg", "max"))


def _percentile(latency: Mapping[str, Any] | None) -> str:
    if not latency or latency.get("percentile_value") is None:
        return ""
    return f"p{floatformat(latency.get('percentile', ''))} {num(latency['percentile_value'])}"


def _fairness(fairness: Mapping[str, Any] | None) -> str:
    if not fairness:
        return ""
    f = {k: num(fairness.get(k, "")) for k in ("events_avg", "events_stddev", "exec_time_avg",
                                               "exec_time_stddev")}  # fmt: skip
    return (
        f"events {f['events_avg']} ± {f['events_stddev']}<br>"
        f"time {f['exec_time_avg']} ± {f['exec_time_stddev']} s"
    )


def _per_transaction(pairs: Sequence[Sequence[Any]]) -> str:
    return "<br>".join(
        f'<span class="mono">{_e(name)}</span> {num(value)}' for name, value in pairs
    )


def counters_rows(counters: Iterable[Mapping[str, Any]]) -> SafeString:
    """templates/runs/_results_counters.html's rows: each run's counters per transaction."""
    return mark_safe("".join(_counters_row(f) for f in counters))  # noqa: S308


COUNTERS = ("rows_read_per_query", "log_fsyncs_per_transaction", "data_fsyncs_per_transaction",
            "binlog_commits_per_transaction", "wal_bytes_per_transaction")  # fmt: skip


def _counters_row(f: Mapping[str, Any]) -> str:
    d = f["derived"] or {}
    cells = [f'<td class="num">{num(_or_blank(d.get(name, "")))}</td>' for name in COUNTERS]
    return (
        f'\n  <tr><td class="num">{_plus_one(f["position"])}</td><td>{_e(f["label"])}</td>'
        f'<td class="status {_e(f["status"])}">{_e(f["status"])}</td>\n'
        f"    {cells[0]}{cells[1]}\n    {cells[2]}{cells[3]}\n    {cells[4]}</tr>\n  "
    )


def variables_rows(variables: Iterable[Sequence[Any]], differing: Any) -> SafeString:
    """The environment's server variables, one row each (templates/runs/_results_stored.html)."""
    return mark_safe(  # noqa: S308
        "".join(
            f'<tr class="{"differs" if k in differing else ""}"><td class="mono">{_e(k)}</td>'
            f'<td class="mono">{_e(_truncated(v, 120))}</td></tr>'
            for k, v in variables
        )
    )


def run_picker(
    figures: Iterable[Any], selected: Sequence[int], colours: Mapping[int, str]
) -> SafeString:
    """The runs to overlay, a checkbox each (templates/runs/_results_stored.html)."""
    return mark_safe(  # noqa: S308
        "".join(
            f'<label class="inline-label"><input type="checkbox" name="runs" value="{_e(f.id)}" '
            f'{"checked" if f.id in selected else ""}><span class="swatch" style="background: '
            f'{_e(colours.get(f.id, ""))}"></span>#{_plus_one(f.position)} {_e(f.label)} '
            f'<span class="muted">r{_plus_one(f.round)}</span></label>'
            for f in figures
        )
    )


def batch_list_rows(batches: Iterable[Mapping[str, Any]]) -> SafeString:
    """templates/runs/home.html's rows: the batches of the list as
    selectors.batch_list_rows() reads them, links and dates made by the view
    (runs/web/views/batches.py home)."""
    return mark_safe("".join(_batch_list_row(b) for b in batches))  # noqa: S308


def _batch_list_row(b: Mapping[str, Any]) -> str:
    name = (
        f'<a href="{_e(b["plan_url"])}">{_e(b["plan__name"])}</a>'
        if b["plan_id"]
        else _e(b["label"] or "imported log")
    )
    waiting = f' <span class="muted">({_e(b["waiting_for"])})</span>' if b["waiting_for"] else ""
    ended = (f" · {_e(b['runs_cancelled'])} cancelled" if b["runs_cancelled"] else "") + (
        f" · {_e(b['runs_skipped'])} skipped" if b["runs_skipped"] else ""
    )
    user = b["launched_by_user__username"]
    by = _e(b["launched_by"]) + (f" · {_e(user)}" if user is not None else "")
    return (
        "\n    <tr>\n"
        f'      <td><input type="checkbox" name="s" value="b{_e(b["id"])}" data-side '
        f'aria-label="compare batch {_e(b["id"])}"></td>\n'
        f'      <td><a href="{_e(b["detail_url"])}">{_e(b["id"])}</a></td>\n'
        f"      <td>{name}</td>\n"
        f"      <td>{_e(b['target__name'] or '—')}</td>\n"
        f'      <td class="status {_e(b["status"])}">{_e(b["status"])}{waiting}</td>\n'
        f'      <td class="num">{_e(b["runs_ran"])} / {_e(b["runs_total"])}{ended}</td>\n'
        f"      <td>{_e(b['created_text'])}</td>\n"
        f"      <td>{by}</td>\n"
        f"      <td>{_e(b['finished_text'])}</td>\n"
        f'      <td><a href="{_e(b["results_url"])}">results</a></td>\n'
        "    </tr>\n  "
    )


def _link(name: str, base: str) -> Callable[[Any], str]:
    """A run's link of `name` for any run id, reversed once, as `{{ base }}{% url %}`."""
    head, _, tail = reverse(name, args=[MARKER]).partition(str(MARKER))
    head, tail = _e(base) + _e(head), _e(tail)
    return lambda run_id: f"{head}{run_id}{tail}"


def escaped(value: Any) -> str:
    """As `{{ value }}` writes it: its text, escaped unless already safe (Django's
    conditional_escape, without its lazy-text wrapper: html.escape is Django's escape).
    Most values are plain text with nothing to escape, or ints: they are let through
    without html.escape's five replacements (3,800 values a 200-run page)."""
    kind = type(value)
    if kind is str:
        return html.escape(value) if _markup(value) else value
    if kind is int:  # not bool: its text is "True"; an int's text has no markup
        return str(value)
    if hasattr(value, "__html__"):
        return str(value.__html__())
    return html.escape(str(value))


_e = escaped  # short, for the rows' HTML above


_markup = re.compile("[&<>\"']").search  # what html.escape replaces


def _truncated(value: Any, length: int) -> str:
    """As `{{ value|truncatechars:length }}` writes it (before escaping), without Truncator's
    walk over every character of a text too short to be cut (most server variables)."""
    text = unicodedata.normalize("NFC", str(value))
    return text if len(text) <= length else Truncator(text).chars(length)


def _plus_one(value: Any) -> str:
    """As `{{ value|add:1 }}` writes it."""
    try:
        return str(int(value) + 1)
    except (TypeError, ValueError):
        return ""


def _or_blank(value: Any) -> Any:
    """`default_if_none:""`."""
    return "" if value is None else value
