"""A migration tested on real rows: the test database taken back to the migration before it,
rows made as they were then (the models of that state), and migrated forward again. Inside
a `db` test: PostgreSQL rolls the schema's changes back with the test's transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@contextmanager
def migrated_from(before: str, to: str) -> Iterator[Apps]:
    """The models as they were at runs' migration `before`, for the test to store rows
    with; migrated to `to` when the block ends."""
    executor = MigrationExecutor(connection)
    executor.migrate([("runs", before)])
    yield executor.loader.project_state(("runs", before)).apps
    with connection.cursor() as cursor:
        # Django's foreign keys are checked at commit: checked now, a table with pending
        # checks cannot be altered.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    executor = MigrationExecutor(connection)  # it read the graph's state at `before`
    executor.migrate([("runs", to)])
