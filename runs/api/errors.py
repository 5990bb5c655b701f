"""Errors of the API: always JSON, `{"field": ..., "message": ...}`.

`field` names the input at fault (null when no single input is), `message` says what is
wrong in words a user can act on. When several inputs are wrong, `errors` lists them all
and the first one is repeated at the top.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import ProtectedError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from runs.loadhosts import ExecutorError
from runs.sysbench.options import ValidationError
from runs.targets import TargetError


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "conflict"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(_as_api_exception(exc), context)
    if response is not None:
        response.data = _error_body(response.data)
    return response


def _as_api_exception(exc: Exception) -> Exception:
    if isinstance(exc, ValidationError):
        return exceptions.ValidationError({exc.field: [exc.message]})
    if isinstance(exc, DjangoValidationError):
        return exceptions.ValidationError(_django_errors(exc))
    if isinstance(exc, TargetError):
        return exceptions.ValidationError({"target": [f"the target answered: {exc.message}"]})
    if isinstance(exc, ExecutorError):  # a load host that cannot be reached, and why
        return exceptions.ValidationError([str(exc)])
    if isinstance(exc, ProtectedError):
        used_by = sorted({str(obj) for obj in exc.protected_objects})[:5]
        return Conflict(f"still used by {', '.join(used_by)}: delete those first")
    return exc


def _django_errors(exc: DjangoValidationError) -> dict[str, list[str]]:
    if hasattr(exc, "error_dict"):
        return {
            "non_field_errors" if name == "__all__" else name: messages
            for name, messages in exc.message_dict.items()
        }
    return {"non_field_errors": exc.messages}


def _error_body(data: Any) -> dict[str, Any]:
    errors = list(_flatten(data, None))
    body: dict[str, Any] = dict(errors[0]) if errors else {"field": None, "message": "error"}
    if len(errors) > 1:
        body["errors"] = errors
    return body


def _flatten(data: Any, field: str | None) -> Any:
    """(field, message) pairs from DRF's nested error details; fields joined with dots."""
    if isinstance(data, dict):
        for key, value in data.items():
            name = None if key in ("detail", "non_field_errors") else str(key)
            yield from _flatten(value, f"{field}.{name}" if field and name else field or name)
    elif isinstance(data, list):
        for item in data:
            yield from _flatten(item, field)
    else:
        yield {"field": field, "message": str(data)}


# --- OpenAPI ------------------------------------------------------------------------------

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "field": {"type": "string", "nullable": True, "description": "The input at fault."},
        "message": {"type": "string"},
        "errors": {
            "type": "array",
            "description": "Every error, when there is more than one.",
            "items": {
                "type": "object",
                "properties": {
                    "field": {"type": "string", "nullable": True},
                    "message": {"type": "string"},
                },
                "required": ["field", "message"],
            },
        },
    },
    "required": ["field", "message"],
}
_ERROR_STATUSES = {
    "400": "Invalid input",
    "401": "No valid token or session",
    "403": "Not allowed",
    "404": "Not found",
    "409": "Conflict",
}


def document_errors(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: every operation may answer with an Error."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"$ref": "#/components/schemas/Error"}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, description in _ERROR_STATUSES.items():
                responses.setdefault(
                    code,
                    {"description": description, "content": {"application/json": {"schema": ref}}},
                )
    return result
