"""The signed-in user of each request, read with one written-out statement.

After its session, every page and API call reads its user. Through the ORM that cost 0.5
ms of CPU (a query built and compiled for one row); with the same SELECT written out, 0.2
ms (docs/performance/load.md). Logging in, permissions and the rest stay Django's
ModelBackend. Named first in AUTHENTICATION_BACKENDS (benchdash/settings.py); Django's own
after it still reads the sessions it logged in (a session names its backend), and only
that: a password this one refuses is not hashed a second time by it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connections, router

from runs.db_rows import model_from_row


class UserBackend(ModelBackend):
    def authenticate(
        self, request: Any, username: Any = None, password: Any = None, **kwargs: Any
    ) -> Any:
        """ModelBackend's; a refusal ends the login (PermissionDenied: Django's backend
        after this one is not asked, and the login fails as it would have)."""
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            raise PermissionDenied
        return user

    async def aauthenticate(
        self, request: Any, username: Any = None, password: Any = None, **kwargs: Any
    ) -> Any:
        """authenticate(), for an asynchronous login."""
        user = await super().aauthenticate(request, username=username, password=password, **kwargs)
        if user is None:
            raise PermissionDenied
        return user

    def get_user(self, user_id: Any) -> Any:
        """The active user of that id, as ModelBackend's reads it; None when there is none."""
        model = get_user_model()
        try:
            pk = model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        connection = connections[router.db_for_read(model)]
        with connection.cursor() as cursor:
            cursor.execute(_user_sql(connection.alias), [pk])
            row = cursor.fetchone()
        if row is None:
            return None
        user = model_from_row(model, model._meta.concrete_fields, row, connection)
        return user if self.user_can_authenticate(user) else None


@cache
def _user_sql(alias: str) -> str:
    model = get_user_model()
    quoted = connections[alias].ops.quote_name
    columns = ", ".join(quoted(str(f.column)) for f in model._meta.concrete_fields)
    table, pk = quoted(model._meta.db_table), quoted(str(model._meta.pk.column))
    return f"SELECT {columns} FROM {table} WHERE {pk} = %s"  # noqa: S608 - the model's names
