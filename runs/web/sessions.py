"""Sessions as Django keeps them in the database, read with one written-out statement.

Every page reads its session first. Through the ORM that read cost 0.4-0.8 ms of CPU
(building and compiling a query for one row, its data decoded), up to a tenth of what a
stored results page costs the server; with the same SELECT written out, 0.2-0.3 ms
(docs/performance/load.md). The table, its rows and
everything else (saving, expiry, logout) stay Django's
(`django.contrib.sessions.backends.db`). Named by SESSION_ENGINE (benchdash/settings.py).
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone


class SessionStore(db.SessionStore):
    def _get_session_from_db(self) -> Any:
        """The session's row if it has not expired, as Django's reads it; else None (the
        key is forgotten, as Django's does)."""
        model = self.model
        connection = connections[router.db_for_read(model)]
        table = connection.ops.quote_name(model._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT session_key, session_data, expire_date FROM {table} "  # noqa: S608 - the model's table
                "WHERE session_key = %s AND expire_date > %s",
                [self.session_key, timezone.now()],
            )
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        return model(session_key=row[0], session_data=row[1], expire_date=row[2])
