"""Suites: a tests axis as people write it, and the built-in microbenchmark suite.

A plan's tests axis (`Plan.tests`) is a list of items `{"test", "options", "family"}`, with
`"rebuild": true` on an item that gets a freshly prepared data set of its own. The editor
shows it as text, one item a line:

    point   oltp_point_select
    range   oltp_read_only  point-selects=0 simple-ranges=1 sum-ranges=0 ...  skip-trx=on
    write   oltp_insert  name=insert  rebuild

the family first, then the test, `name=` the row's name in the relative table (optional),
its options as name=value, and `rebuild` where it rebuilds.
`microbenchmarks()` is the preset the editor loads for the user to edit: point queries,
range queries, range queries with aggregation and writes, grouped as such (the form of
the published version comparisons). Pure: no Django, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from runs.errors import InvalidInput
from runs.sysbench.options import validate_test
from runs.sysbench.values import clean_options, render_value

MAX_TESTS = 64
_FAMILY_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")
REBUILD_WORD = "rebuild"
NAME_WORD = "name"  # name=range-sum: how the relative table's row names the item

# oltp_read_only's queries, all off: each item of the suite turns on the ones it measures.
_NO_READS = {
    "point-selects": 0,
    "simple-ranges": 0,
    "sum-ranges": 0,
    "order-ranges": 0,
    "distinct-ranges": 0,
}
_READS_ONLY = {"skip-trx": True}  # one query per event: no BEGIN/COMMIT around it
# A row deleted and inserted again under its id, in one transaction: oltp_delete alone
# (sysbench 1.0.20) only deletes, and would leave the writers after it an emptied table.
_DELETE_INSERT = {"index-updates": 0, "non-index-updates": 0, "delete-inserts": 1}

FAMILIES = ("point", "range", "range-aggregation", "write")


def microbenchmarks() -> list[dict[str, Any]]:
    """The built-in microbenchmark suite: a preset, edited by the user in the editor.

    Readers first, then writers (the matrix orders them so anyway: every reader sees the
    data set as prepared); oltp_read_only's range queries one kind at a time. The writers
    on the shared data set keep its size (updates; a delete with its re-insert); the one
    that only inserts rebuilds a data set of its own."""

    def reads(**queries: int) -> dict[str, Any]:
        return {**_NO_READS, **queries, **_READS_ONLY}

    def item(name: str, family: str, test: str, **options: Any) -> dict[str, Any]:
        return {"test": test, "options": options, "family": family, "name": name}

    return [
        item("point-select", "point", "oltp_point_select"),
        item("points-10", "point", "oltp_read_only", **reads(**{"point-selects": 10})),
        item("range-100", "range", "oltp_read_only", **reads(**{"simple-ranges": 1})),
        item(
            "range-1000",
            "range",
            "oltp_read_only",
            **{**reads(**{"simple-ranges": 1}), "range-size": 1000},
        ),
        item("range-sum", "range-aggregation", "oltp_read_only", **reads(**{"sum-ranges": 1})),
        item("range-order", "range-aggregation", "oltp_read_only", **reads(**{"order-ranges": 1})),
        item(
            "range-distinct",
            "range-aggregation",
            "oltp_read_only",
            **reads(**{"distinct-ranges": 1}),
        ),
        item("update-index", "write", "oltp_update_index"),
        item("update-nonindex", "write", "oltp_update_non_index"),
        item("delete-insert", "write", "oltp_write_only", **_DELETE_INSERT),
        item("write-only", "write", "oltp_write_only"),
        # Only inserts: each run grows its table, so it gets a data set of its own.
        {**item("insert", "write", "oltp_insert"), "rebuild": True},
    ]


def suite_from_text(text: str) -> list[dict[str, Any]]:
    """The tests axis from the editor's text; raises InvalidInput naming the line."""
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if words:
            items.append(_item(number, words))
    if len(items) > MAX_TESTS:
        raise InvalidInput("tests", f"{len(items)} tests, more than the limit of {MAX_TESTS}")
    return items


def _item(number: int, words: Sequence[str]) -> dict[str, Any]:
    where = f"line {number}"
    if len(words) < 2:
        raise InvalidInput(
            "tests", f"{where}: give a family and a test, e.g. point oltp_point_select"
        )
    family, test, *rest = words
    if not _FAMILY_RE.fullmatch(family):
        raise InvalidInput("tests", f"{where}: {family!r} is not a family name (e.g. point)")
    try:
        test = validate_test(test)
    except InvalidInput as e:
        raise InvalidInput("tests", f"{where}: {e.message}") from None
    options: dict[str, object] = {}
    extra: dict[str, Any] = {}
    for word in rest:
        if word == REBUILD_WORD:
            extra["rebuild"] = True
            continue
        name, equals, value = word.partition("=")
        if not equals or not name or not value:
            raise InvalidInput("tests", f"{where}: {word!r} is not name=value or rebuild")
        if name == NAME_WORD:
            extra["name"] = _label(where, value)
        else:
            options[name] = int(value) if value.isdigit() else value
    try:
        cleaned = clean_options(test, options)
    except InvalidInput as e:
        raise InvalidInput("tests", f"{where}: {e.field}: {e.message}") from None
    item: dict[str, Any] = {"test": test, "options": _plain(cleaned), "family": family}
    return {**item, **extra}


def _label(where: str, value: str) -> str:
    if not _FAMILY_RE.fullmatch(value):
        raise InvalidInput(
            "tests", f"{where}: name {value!r}: letters, digits, - and _, at most 40"
        )
    return value


def _plain(cleaned: Mapping[str, object]) -> dict[str, object]:
    # As a plan stores them: numbers as numbers, switches as true/false.
    return {name: value for name, value in cleaned.items()}


def suite_text(items: Sequence[Mapping[str, Any]]) -> str:
    """The editor's text of a tests axis: the inverse of suite_from_text."""
    lines = []
    for item in items:
        options = item.get("options") or {}
        words = [str(item.get("family") or "other"), str(item.get("test", ""))]
        words += [f"{NAME_WORD}={item['name']}"] if item.get("name") else []
        words += [f"{name}={_shown(value)}" for name, value in options.items()]
        if item.get("rebuild"):
            words.append(REBUILD_WORD)
        lines.append(" ".join(words))
    return "\n".join(lines)


def _shown(value: object) -> str:
    if isinstance(value, bool | int | float | str):
        return render_value(value)
    return str(value)
