"""The application's own errors, at the bottom layer so every room can raise and catch them.

`ApplicationError` is the root of what benchdash refuses on purpose; its name is not
Django's (`django.core.exceptions.ValidationError`) nor DRF's, so a reader never wonders
which one an `except` catches. Errors that belong to one room (an SSH failure inside the
SSH layer, a target that went away, a stopped batch) stay in that room; a load host's
`ExecutorError` is here because the pages and the API catch it from the services without
importing the load hosts' room.

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


class ExecutorError(ApplicationError):
    """A load host could not be reached, or sysbench could not be started there; the
    message names the host and the cause. Raised by runs/loadhosts/."""
