"""A finished batch's header and its stored answer, read for a page or the API in one
written-out statement.

The results page and the API results of a stored answer read the batch with its answer
(stored_results.with_stored). Through the ORM that read cost 2.4 of the stored page's 9 ms
of CPU: building and compiling a query with a FilteredRelation for one row, and making
the plan, target and load host of 60 fields that the header does not show
(docs/performance/load.md). Here the same row comes from one SELECT written once a
process: the header's fields, the plan's and target's names, and the answer's etag and
part, fresh as with_stored's are.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Field

from runs.db_rows import model_from_row
from runs.models import Batch, Plan, StoredResults, Target
from runs.services.answers import held
from runs.services.answers.stored_results import PARTS, stored_key, stored_version

# What the pages and the API show of a batch beside its stored answer: its header.
HEADER_FIELDS = ("id", "plan_id", "target_id", "label", "params", "status", "created_at",
                 "started_at", "finished_at", "warnings", "error")  # fmt: skip


def header_with_stored(pk: int, *, baseline: str | int | None, part: str) -> Batch | None:
    """The batch `pk` as with_stored reads it: its header's fields (HEADER_FIELDS, the
    rest deferred: stored_results reads the whole batch to build an answer), its plan's and
    target's names, the stored answer's etag and `part`; None when there is no such
    batch."""
    if part not in PARTS:
        raise ValueError(f"not a part of an answer: {part}")
    params: dict[str, Any] = {"pk": pk, "key": stored_key(baseline), "part": part}
    params.update(version=f"{stored_version()}-", held=held.etags(part))
    with connection.cursor() as cursor:
        cursor.execute(_header_sql(), params)
        row = cursor.fetchone()
    return _header_of(row, part) if row is not None else None


@cache
def _header_fields() -> list[Field[Any, Any]]:
    """In the model's order: Model.from_db takes the values of a partial row in it."""
    return [f for f in Batch._meta.concrete_fields if f.attname in HEADER_FIELDS]


@cache
def _header_sql() -> str:
    quoted = connection.ops.quote_name
    batch, plan, target, stored = (m._meta.db_table for m in (Batch, Plan, Target, StoredResults))
    columns = ", ".join(f"b.{quoted(str(f.column))}" for f in _header_fields())
    return (
        f"SELECT {columns}, p.name, t.name, s.etag, "  # noqa: S608 - the models' names
        "CASE WHEN s.etag = ANY(%(held)s) THEN NULL ELSE s.content ->> %(part)s END "
        f"FROM {quoted(batch)} b "
        f"LEFT JOIN {quoted(plan)} p ON p.id = b.plan_id "
        f"LEFT JOIN {quoted(target)} t ON t.id = b.target_id "
        f"LEFT JOIN {quoted(stored)} s ON s.batch_id = b.id AND s.key = %(key)s "
        "AND starts_with(s.etag, %(version)s) "
        "AND s.computed_at >= COALESCE(b.finished_at, b.created_at) "
        "WHERE b.id = %(pk)s"
    )  # as with_stored's `fresh`


def _header_of(row: tuple[Any, ...], part: str) -> Batch:
    fields = _header_fields()
    count = len(fields)
    batch = model_from_row(Batch, fields, row[:count], connection)
    plan_name, target_name, etag, text = row[count:]
    batch.__dict__.update({"cached_etag": etag, f"cached_{part}": text})  # as with_stored's
    if batch.plan_id is not None:
        batch.plan = _named(Plan, batch.plan_id, plan_name)
    if batch.target_id is not None:
        batch.target = _named(Target, batch.target_id, target_name)
    return batch


def _named(model: type[Plan | Target], pk: int, name: str) -> Any:
    """The plan or target with its id and name, the rest of it deferred."""
    known = {"id": pk, "name": name}
    names = [f.attname for f in model._meta.concrete_fields if f.attname in known]
    return model.from_db(connection.alias, names, [known[n] for n in names])
