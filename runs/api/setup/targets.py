"""Targets: list, create, read, update, delete. The password is write-only; the restart
mode, restart config and server host are set or changed by who may manage restarts."""

from __future__ import annotations

from rest_framework import generics, serializers
from rest_framework.serializers import BaseSerializer

from runs.api.common import OWNED, SECRET_STYLE, JSONModelBody, assign, request_user
from runs.models import (
    Target,
)
from runs.services import definitions, permissions


class TargetSerializer(JSONModelBody[Target]):
    password = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        style=SECRET_STYLE,
        help_text="Stored encrypted; never returned. Left out on update: kept, unless the "
        "update changes the host, port, socket, engine or user: then it is removed.",
    )
    has_password = serializers.SerializerMethodField()

    class Meta:
        model = Target
        fields = [
            "id",
            "name",
            "engine",
            "host",
            "port",
            "socket",
            "database",
            "user",
            "password",
            "has_password",
            "cpu_cores",
            "disk_count",
            "server_host",
            "restart_mode",
            "restart_config",
            "created_at",
        ]
        extra_kwargs = {
            "port": {"min_value": 1, "max_value": 65535},
            "cpu_cores": {"min_value": 1, "max_value": 100_000},
            "disk_count": {"min_value": 0, "max_value": 10_000},
        }

    def get_has_password(self, target: Target) -> bool:
        return bool(target.password)


class TargetList(generics.ListCreateAPIView[Target]):
    queryset = Target.objects.all()
    serializer_class = TargetSerializer

    def perform_create(self, serializer: BaseSerializer[Target]) -> None:
        target = Target(**serializer.validated_data, created_by=request_user(self.request))
        permissions.require_restarts(self.request.user, target)
        serializer.instance = definitions.target_save(target=target)


class TargetDetail(generics.RetrieveUpdateDestroyAPIView[Target]):
    queryset = Target.objects.all()
    serializer_class = TargetSerializer
    permission_classes = OWNED

    def perform_update(self, serializer: BaseSerializer[Target]) -> None:
        values = dict(serializer.validated_data)
        password = values.pop("password", None)
        target = assign(serializer.instance, values)
        permissions.require_restarts(self.request.user, target)
        definitions.target_save(target=target, password=password)
