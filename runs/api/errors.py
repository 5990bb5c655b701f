"""Errors of the API: always JSON, `{"field": ..., "message": ...}`.

`field` names the input at fault (null when no single input is), `message` says what is
wrong in words a user can act on. When several inputs are wrong, `errors` lists them all
and the first one is repeated at the top.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.db.models import ProtectedError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, renderers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from runs.errors import ExecutorError, InvalidInput
from runs.http import health_down
from runs.targets import TargetError


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "conflict"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    exc = _as_api_exception(exc)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # Django responds: server_error below
    response.data = _error_body(response.data)
    if _only_unique(exc):
        response.status_code = status.HTTP_409_CONFLICT
    _respond_in_json(context.get("request"))
    return response


def _only_unique(exc: Exception) -> bool:
    """A name already taken: the input is well formed, it clashes with what is stored."""
    if not isinstance(exc, exceptions.ValidationError):
        return False
    codes = {error["message"] for error in _flatten(exc.get_codes(), None)}
    return codes == {"unique"}


def _respond_in_json(request: Request | None) -> None:
    # An error is JSON even where the response would have been CSV (the samples).
    if request is not None and not isinstance(
        getattr(request, "accepted_renderer", None), renderers.JSONRenderer
    ):
        request.accepted_renderer = renderers.JSONRenderer()
        request.accepted_media_type = "application/json"


def _as_api_exception(exc: Exception) -> Exception:
    if isinstance(exc, InvalidInput):
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


# --- responses Django gives before or after DRF -----------------------------------------------
# An unknown address or an id that is not a number never reaches a DRF view, and an
# exception DRF does not know about leaves it: Django responds to those, with these views
# for the whole site (benchdash/urls.py). Under /api/ they respond in the API's JSON shape; the
# pages keep Django's HTML error pages.

API_PREFIX = "/api/"


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def _json_error(message: str, status_code: int) -> JsonResponse:
    return JsonResponse({"field": None, "message": message}, status=status_code)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json_error("bad request: the request could not be read", 400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json_error(str(exception) or "not allowed", 403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json_error(f"nothing at {request.path}: see /api/v1/schema/ for the API", 404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _results_database_down():
        return _results_database_down_response(request)
    if _is_api(request):
        return _json_error("internal error: the server failed to answer; the error is logged", 500)
    return defaults.server_error(request)


RESULTS_DATABASE_DOWN = (
    "the results database cannot be reached: nothing can be read or saved until it is back; "
    "running benchmarks go on (their samples wait in memory)"
)
RETRY_AFTER_S = 10


def _results_database_down() -> bool:
    """Whether the error being answered is the results database out of reach (no
    connection, or none from the pool within its timeout), wherever it was raised: in a
    view, in DRF, or in the session and login middleware before any view."""
    error = sys.exc_info()[1]
    return isinstance(error, (OperationalError, InterfaceError))


def _results_database_down_response(request: HttpRequest) -> HttpResponse:
    """503 with a sentence: JSON under /api/, a plain page (no template: rendering one
    may read the database) for the pages; the health page from Redis to a session that
    opened it lately."""
    health_page = None if _is_api(request) else health_down.health_page_database_down(request)
    if health_page is not None:  # its session opened it lately: from Redis
        response: HttpResponse = health_page
    elif _is_api(request):
        response = _json_error(RESULTS_DATABASE_DOWN, 503)
    else:
        page = (
            "<!doctype html><html lang=en><meta charset=utf-8><title>benchdash: database "
            "unreachable</title><h1>The results database is unreachable</h1>"
            f"<p>{RESULTS_DATABASE_DOWN}.</p><p>Try again in a minute.</p></html>"
        )
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


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


def error_statuses(path: str, method: str, operation: dict[str, Any]) -> dict[str, str]:
    """The error responses an operation can give, by status, with what they mean."""
    query = [p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"]
    # A page that does not exist is a 404, the only response to a wrong ?page=.
    takes_input = "requestBody" in operation or bool(set(query) - {"page"})
    statuses = {}
    if takes_input or method in ("post", "put", "patch"):  # services refuse too
        statuses["400"] = "Invalid input, or a stored value that cannot be used"
    statuses["401"] = "No valid token or session"
    statuses["403"] = "Not allowed"
    if "{" in path:
        statuses["404"] = "No such object"
    elif "page" in query:
        statuses["404"] = "No such page"
    if method == "delete":
        statuses["409"] = "Still used by other objects"
    elif "requestBody" in operation:
        statuses["409"] = "A name already taken"
    if "requestBody" in operation:
        statuses["415"] = "The body is not in a media type the operation takes"
    statuses["500"] = "Internal error; it is logged"
    return statuses


# Answers above 400 that are not errors: health's 503 is the report, with what is gone.
NOT_ERRORS = {("health", "503")}


def document_errors(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: the error responses of every operation, each an
    Error."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for code, description in error_statuses(path, method, operation).items():
                responses.setdefault(code, {"description": description})
            for code, response in responses.items():
                if (operation.get("operationId"), code) in NOT_ERRORS:
                    continue
                if code >= "400":  # declared by a view or above: always an Error
                    response["content"] = content
    return result
