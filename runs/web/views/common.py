"""What the pages share: showing a service's refusal on a form, and who is asking."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import ProtectedError
from django.forms import BaseForm
from django.http import HttpRequest

from runs.errors import InvalidInput


def show_refusal(form: BaseForm, error: InvalidInput) -> None:
    """Show a service's refusal on the field it names (on load_host for load_host.address,
    saying which of its fields), or above the form."""
    if error.field in form.fields:
        form.add_error(error.field, error.message)
        return
    parent = error.field.split(".")[0]
    field = parent if parent in form.fields else None
    form.add_error(field, str(error))
    if field is None:  # the page script marks the input of an option or a setting
        form.__dict__.setdefault("refusals", []).append(error)


def show_model_errors(form: BaseForm, error: DjangoValidationError) -> None:
    for name, problems in error.message_dict.items():
        for problem in problems:
            form.add_error(name if name in form.fields else None, f"{name}: {problem}")


def request_user(request: HttpRequest) -> User | None:
    return request.user if isinstance(request.user, User) else None


def show_protected(request: HttpRequest, what: str, error: ProtectedError) -> None:
    kinds: dict[str, int] = {}
    for obj in error.protected_objects:
        name = type(obj)._meta.verbose_name_plural
        kinds[str(name)] = kinds.get(str(name), 0) + 1
    uses = " and ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    messages.error(
        request,
        f"{what} is kept: {uses} use it, and finished results are never deleted with what "
        "they ran on.",
    )
