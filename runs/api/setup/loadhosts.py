"""Load hosts: list, create, read, update, delete, and pinning an SSH host's key
(scan, then confirm its fingerprint). The private key is write-only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from runs.api.common import OWNED, SECRET_STYLE, JSONBody, JSONModelBody, assign, request_user
from runs.models import (
    LoadHost,
)
from runs.services import definitions, loadhosts, permissions

KEY_PATH_GONE = (
    "key files on the worker are no longer used (any user could name another's key): "
    "paste the private key in private_key; it is stored encrypted"
)


class LoadHostSerializer(JSONModelBody[LoadHost]):
    private_key = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        style={**SECRET_STYLE, "base_template": "textarea.html"},
        help_text="PEM or OpenSSH private key, stored encrypted; never returned. Left out on "
        "update: kept, unless the update changes the address or user: then it is removed.",
    )
    has_private_key = serializers.SerializerMethodField()

    class Meta:
        model = LoadHost
        fields = [
            "id",
            "name",
            "kind",
            "address",
            "port",
            "user",
            "private_key",
            "has_private_key",
            "host_key",
            "seen_host_key",
            "facts",
            "facts_at",
            "created_at",
        ]
        read_only_fields = ["host_key", "seen_host_key", "facts", "facts_at"]
        # 0 on the local host, which has no port
        extra_kwargs = {"port": {"min_value": 0, "max_value": 65535}}

    def get_has_private_key(self, load_host: LoadHost) -> bool:
        return bool(load_host.private_key)

    def to_internal_value(self, data: Any) -> Any:
        # Said rather than ignored: a script still sending a key file would otherwise
        # get a load host that cannot log in, without knowing why.
        if isinstance(data, Mapping) and "key_path" in data:
            raise serializers.ValidationError({"key_path": [KEY_PATH_GONE]})
        return super().to_internal_value(data)


class HostKeyConfirmSerializer(JSONBody[Any]):
    fingerprint = serializers.CharField(
        max_length=200,
        help_text="The fingerprint of the key the host presented (see seen_host_key), "
        "as checked out of band, e.g. SHA256:...",
    )


class HostScanSerializer(serializers.Serializer[Any]):
    fingerprint = serializers.CharField(help_text="Compare it with the host's own, then confirm.")
    seen_host_key = serializers.CharField()


class LoadHostList(generics.ListCreateAPIView[LoadHost]):
    queryset = LoadHost.objects.all()
    serializer_class = LoadHostSerializer

    def perform_create(self, serializer: BaseSerializer[LoadHost]) -> None:
        load_host = LoadHost(**serializer.validated_data, created_by=request_user(self.request))
        serializer.instance = definitions.loadhost_save(load_host=load_host)


class LoadHostDetail(generics.RetrieveUpdateDestroyAPIView[LoadHost]):
    queryset = LoadHost.objects.all()
    serializer_class = LoadHostSerializer
    permission_classes = OWNED

    def perform_update(self, serializer: BaseSerializer[LoadHost]) -> None:
        values = dict(serializer.validated_data)
        private_key = values.pop("private_key", None)
        load_host = assign(serializer.instance, values)
        definitions.loadhost_save(load_host=load_host, private_key=private_key)


class LoadHostScan(APIView):
    """Connect to the SSH host without logging in and keep the key it presents as seen."""

    @extend_schema(
        operation_id="load_hosts_scan", request=None, responses={200: HostScanSerializer}
    )
    def post(self, request: Request, pk: int) -> Response:
        load_host = get_object_or_404(LoadHost, pk=pk)
        permissions.require(request.user, "change", load_host)
        fingerprint = loadhosts.load_host_scan(load_host=load_host)
        scanned = {"fingerprint": fingerprint, "seen_host_key": load_host.seen_host_key}
        return Response(HostScanSerializer(scanned).data)


class LoadHostConfirmHostKey(APIView):
    """Pin the key the last scan saw, once you checked its fingerprint on the host itself."""

    @extend_schema(
        operation_id="load_hosts_confirm_host_key",
        request=HostKeyConfirmSerializer,
        responses={200: LoadHostSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        load_host = get_object_or_404(LoadHost, pk=pk)
        permissions.require(request.user, "change", load_host)
        given = HostKeyConfirmSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        fingerprint = given.validated_data["fingerprint"]
        load_host = loadhosts.load_host_pin_key(load_host=load_host, fingerprint=fingerprint)
        return Response(LoadHostSerializer(load_host).data)
