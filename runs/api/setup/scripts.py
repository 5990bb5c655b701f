"""Custom Lua scripts and bundles, for scripts: the list, an upload (one file, several
files, or a tar.gz/zip archive in base64), a script with what it offers (its options and
commands, as sysbench reports them), and its versions. Uploading needs the permission
runs.upload_luascript; a new version of a script is for its owner and staff."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.api.common import JSONBody, request_user
from runs.errors import InvalidInput
from runs.models import LuaScript
from runs.services.scripts import luascripts


class ScriptSerializer(serializers.ModelSerializer[LuaScript]):
    uploaded_by = serializers.CharField(
        source="uploaded_by.username", read_only=True, allow_null=True, default=None
    )
    entry = serializers.SerializerMethodField(help_text="The entry script's file name.")
    file_names = serializers.SerializerMethodField(help_text="Every file, the entry first.")

    class Meta:
        model = LuaScript
        fields = ["id", "name", "entry", "version", "file_names", "digests", "uploaded_by"]
        fields += ["created_at"]
        read_only_fields = fields

    def get_entry(self, script: LuaScript) -> str:
        return script.entry or luascripts.ONE_FILE

    def get_file_names(self, script: LuaScript) -> list[str]:
        return [self.get_entry(script), *sorted(script.files or {})]


class ScriptOptionSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.CharField(help_text="int, float, bool, size or text")
    help = serializers.CharField(allow_blank=True)
    default = serializers.JSONField(allow_null=True)


class ScriptDetailSerializer(ScriptSerializer):
    options = ScriptOptionSerializer(
        many=True,
        read_only=True,
        help_text="The script's own options: give their values in a plan's options.script_options.",
    )
    commands = serializers.ListField(
        child=serializers.CharField(), read_only=True, help_text="prepare, cleanup, check..."
    )

    class Meta(ScriptSerializer.Meta):
        fields = [*ScriptSerializer.Meta.fields, "options", "commands"]
        read_only_fields = fields


class ScriptUploadSerializer(JSONBody[Any]):
    name = serializers.CharField(
        max_length=100, help_text="A new name, or the name of your script for a new version."
    )
    content = serializers.CharField(
        required=False, default="", allow_blank=True, trim_whitespace=False,
        help_text="A one-file script's text.",
    )  # fmt: skip
    files = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False),
        required=False,
        default=dict,
        help_text='A bundle: file name → text, e.g. {"tpcc.lua": "...", ...}.',
    )
    archive = serializers.CharField(
        required=False, default="", allow_blank=True,
        help_text="A bundle as a tar.gz or zip archive, in base64.",
    )  # fmt: skip
    entry = serializers.CharField(
        max_length=200, required=False, default="", allow_blank=True,
        help_text="The entry script's file name, when the bundle does not make it plain.",
    )  # fmt: skip


class ScriptVersionSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField(help_text="Counts uploads, from 1.")
    entry = serializers.CharField()
    digests = serializers.DictField(child=serializers.CharField())
    created_at = serializers.DateTimeField(help_text="When this version was uploaded.")
    uploaded_by = serializers.CharField(
        allow_null=True,
        help_text="Who uploaded this version; null when the account is gone, or for a "
        "version after the first uploaded before benchdash recorded it.",
    )


class ScriptList(generics.ListAPIView[LuaScript]):
    serializer_class = ScriptSerializer

    def get_queryset(self) -> QuerySet[LuaScript]:
        return LuaScript.objects.select_related("uploaded_by").order_by("name")

    @extend_schema(
        operation_id="scripts_create",
        request=ScriptUploadSerializer,
        responses={201: ScriptDetailSerializer},
    )
    def post(self, request: Request) -> Response:
        given = ScriptUploadSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        values = given.validated_data
        script = luascripts.luascript_upload(
            user=request_user(request),
            name=values["name"],
            content=values["content"],
            files=values["files"] or None,
            archive=_archive(values["archive"]),
            entry=values["entry"],
        )
        return Response(_detail(script), status=status.HTTP_201_CREATED)


class ScriptDetail(APIView):
    """A script, with what it offers: its options and commands."""

    @extend_schema(operation_id="scripts_retrieve", responses={200: ScriptDetailSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(_detail(get_object_or_404(LuaScript, pk=pk)))


class ScriptVersions(APIView):
    """Every version of a script in upload order, the current (newest) one first, each
    with who uploaded it and when."""

    @extend_schema(
        operation_id="scripts_versions", responses={200: ScriptVersionSerializer(many=True)}
    )
    def get(self, request: Request, pk: int) -> Response:
        script = get_object_or_404(luascripts.luascripts_listed(), pk=pk)
        versions = luascripts.luascript_versions(script=script)
        return Response(ScriptVersionSerializer(versions, many=True).data)


def _archive(text: str) -> bytes | None:
    if not text:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput("archive", "is not base64") from None


def _detail(script: LuaScript) -> dict[str, Any]:
    interface = luascripts.luascript_interface(script=script).to_json()
    data = ScriptSerializer(script).data
    return {**data, "options": interface["options"], "commands": interface["commands"]}
