"""What the API's modules share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from django.contrib.auth.models import User
from django.db.models import Model
from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from runs.services import permissions

SECRET_STYLE = {"input_type": "password"}
_T = TypeVar("_T")
_M = TypeVar("_M", bound=Model)


def assign(instance: Any, values: dict[str, Any]) -> Any:
    for name, value in values.items():
        setattr(instance, name, value)
    return instance


def request_user(request: Request) -> User:
    # IsAuthenticated lets no anonymous request through.
    assert isinstance(request.user, User)
    return request.user


class MayChange(BasePermission):
    """Writes to a target, load host or plan: runs/services/permissions.py decides, before
    the input is even read; a refusal is a 403 that says who may."""

    def has_object_permission(self, request: Request, view: APIView, obj: Any) -> bool:
        if request.method not in SAFE_METHODS:
            action = "delete" if request.method == "DELETE" else "change"
            permissions.require(request.user, action, obj)
        return True


OWNED = [IsAuthenticated, MayChange]
# --- JSON bodies, taken as typed ------------------------------------------------------------
# DRF reads values as a form would: 5 for "5", "5" for 5, True for "yes". A JSON body says
# what it means: a value of another type than the schema's is refused, naming the field.


# Base of the serializers of JSON request bodies: every value has its schema's type, and a
# key that is not a writable field is refused, naming it, never dropped in silence. (No
# docstring: the schema would describe every body with it.)
class JSONBody(serializers.Serializer[_T], Generic[_T]):
    # Fields the API once took under another name: old name → where it went.
    moved: Mapping[str, str] = {}

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return super().to_internal_value(data)
        mistyped = {
            str(field.field_name): [problem]
            for field in self._writable_fields
            if field.field_name in data and (problem := type_problem(field, data[field.field_name]))
        }
        mistyped.update(self._unknown(data))
        if not mistyped:
            return super().to_internal_value(data)
        try:  # the other fields' errors too, all at once
            super().to_internal_value({k: v for k, v in data.items() if k not in mistyped})
        except serializers.ValidationError as e:
            if isinstance(e.detail, dict):
                raise serializers.ValidationError({**e.detail, **mistyped}) from None
        raise serializers.ValidationError(mistyped)

    def _unknown(self, data: Mapping[str, Any]) -> dict[str, list[str]]:
        """Each key of `data` that is not a writable field, and why it is refused."""
        writable = {field.field_name for field in self._writable_fields}
        return {str(key): [self._unknown_why(str(key))] for key in data if key not in writable}

    def _unknown_why(self, key: str) -> str:
        if key in self.moved:
            return f"unknown field: {key} is now {self.moved[key]}"
        if key in self.fields:
            return f"read-only field: {key} is set by benchdash; leave it out"
        return f"unknown field: {key} is not one of this body's fields (the API schema lists them)"


class JSONBodySchema(OpenApiSerializerExtension):
    """A JSON body's schema says it takes no other key (`additionalProperties: false`):
    a client generated from it, or a test fuzzing by it, sends only what is read."""

    target_class = JSONBody
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema


# The same, for the serializers of models.
class JSONModelBody(JSONBody[_M], serializers.ModelSerializer[_M], Generic[_M]):
    pass


def type_problem(field: serializers.Field[Any, Any, Any, Any], value: Any) -> str | None:
    """Why `value` is not of the JSON type `field` takes, or None. A null is left to the
    field, which knows whether it allows one."""
    if value is None:
        return None
    if isinstance(field, serializers.ListField):
        if not isinstance(value, list):
            return "must be a list"
        return next((p for item in value if (p := type_problem(field.child, item))), None)
    if isinstance(field, serializers.DictField):
        if not isinstance(value, dict):
            return "must be an object"
        return next((p for v in value.values() if (p := type_problem(field.child, v))), None)
    for kinds, wanted, problem in _TYPES:
        if isinstance(field, kinds) and not _is(value, wanted):
            return problem
    longest = getattr(field, "max_length", None)
    if isinstance(value, str) and longest is not None and len(value) > longest:
        # as sent: DRF would measure it once trimmed
        return f"must be at most {longest} characters"
    return None  # JSONField and the like take any value


def _is(value: Any, wanted: tuple[type, ...]) -> bool:
    return isinstance(value, wanted) and (bool in wanted or not isinstance(value, bool))


_TYPES: list[tuple[tuple[type, ...], tuple[type, ...], str]] = [
    ((serializers.BooleanField,), (bool,), "must be true or false"),
    ((serializers.IntegerField,), (int,), "must be a whole number"),
    ((serializers.FloatField, serializers.DecimalField), (int, float), "must be a number"),
    ((serializers.PrimaryKeyRelatedField,), (int,), "must be an id, a whole number"),
    (
        (
            serializers.CharField,
            serializers.ChoiceField,
            serializers.DateTimeField,
            serializers.DateField,
            serializers.DurationField,
        ),
        (str,),
        "must be a string",
    ),
]


# Base of the serializers of query parameters. A parameter given empty (`?plan=`) is refused
# rather than read as left out, as DRF reads an empty form field.
class QueryParameters(serializers.Serializer[Any]):
    def to_internal_value(self, data: Any) -> Any:
        empty = {
            str(name): ["give a value, or leave the parameter out"]
            for name in self.fields
            if hasattr(data, "get") and data.get(name) == ""
        }
        if empty:
            raise serializers.ValidationError(empty)
        return super().to_internal_value(data)
