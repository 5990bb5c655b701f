"""A run's host metrics: what each machine did every second, on sysbench's clock."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.models import HostMetrics, Run
from runs.services import run_selectors


class HostMetricsRowSerializer(serializers.ModelSerializer[HostMetrics]):
    class Meta:
        model = HostMetrics
        fields = ["role", "host", "seq", "time_s", "values"]
        read_only_fields = fields


class HostMetricsPageSerializer(serializers.Serializer[Any]):
    run = serializers.IntegerField()
    run_status = serializers.CharField()
    host_summary = serializers.JSONField(
        help_text="Per host: CPU %, busy %, run queue, context switches, IOPS, MB/s, KB/s "
        "over the steady state, the database process's CPU per transaction; and the hosts "
        "missing, with why."
    )
    bottleneck = serializers.JSONField(help_text="What limited the run, with its evidence.")
    results = HostMetricsRowSerializer(many=True)


class RunHostMetrics(APIView):
    """Every second of every machine of the run (the server host, each load host), in
    order: CPU, run queue, context switches, disks, network, memory, and the database
    process's own CPU (server only)."""

    @extend_schema(responses=HostMetricsPageSerializer)
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(
            Run.objects.only("id", "status", "host_summary", "bottleneck"), pk=pk
        )
        page = {
            "run": run.pk,
            "run_status": run.status,
            "host_summary": run.host_summary,
            "bottleneck": run.bottleneck,
            "results": run_selectors.run_host_metrics(run),
        }
        return Response(HostMetricsPageSerializer(page).data)
