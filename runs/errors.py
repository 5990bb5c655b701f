"""The application's own errors, at the bottom layer so every room can raise and catch them.

`ApplicationError` is the root of what benchdash refuses on purpose; its name is not
Django's (`django.core.exceptions.ValidationError`) nor DRF's, so a reader never wonders
which one an `except` catches. Errors that belong to one room (an SSH failure, a target
that went away, a stopped batch) stay in that room.

Pure: no Django, no I/O, nothing of runs.
"""

from __future__ import annotations


class ApplicationError(Exception):
    """Something benchdash refuses or cannot do, said in words a user can act on."""


class InvalidInput(ApplicationError, ValueError):
    """A refused input, naming the field at fault so forms and the API can show it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def within(self, parent: str) -> InvalidInput:
        """The same refusal with its field named inside `parent`: load_host.address."""
        return InvalidInput(f"{parent}.{self.field}", self.message)
