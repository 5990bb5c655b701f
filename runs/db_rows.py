"""Model instances from rows read with a written-out SELECT.

A page's few hot reads (its user, a batch's header with its stored answer) are written
out: the ORM spent more building and compiling their SQL than PostgreSQL spent answering
it. Their rows become model instances here, their values converted as the ORM converts
them (a JSON column's text decoded), the fields they do not hold deferred.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)


def model_from_row(
    model: type[M], fields: Sequence[Field[Any, Any]], row: Sequence[Any],
    connection: BaseDatabaseWrapper,
) -> M:  # fmt: skip
    """An instance of `model` with `fields`, in the model's order, read from `row`."""
    values = [
        f.from_db_value(v, None, connection) if hasattr(f, "from_db_value") else v
        for f, v in zip(fields, row, strict=True)
    ]
    return model.from_db(connection.alias, [f.attname for f in fields], values)
