"""The installation's health: its processes' heartbeats, the servers it needs, its queue."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.api.auth import TokenAuthentication
from runs.services import health


class ProcessHealthSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(help_text="A worker's name@machine, `beat`, `sweeper` or `web`.")
    alive = serializers.BooleanField(help_text="It beat within BENCHDASH_STALE_AFTER_SECONDS.")
    last_heartbeat = serializers.DateTimeField(allow_null=True)
    age_s = serializers.FloatField(allow_null=True, help_text="Seconds since its heartbeat.")
    queues = serializers.ListField(child=serializers.CharField(), help_text="A worker's queues.")
    batch = serializers.IntegerField(allow_null=True, help_text="A worker's current batch.")
    waiting_for = serializers.CharField(help_text="What its current batch waits for.")
    report = serializers.DictField(help_text="What it said: the sweeper's last sweep, etc.")


class ReachabilitySerializer(serializers.Serializer[Any]):
    reachable = serializers.BooleanField()
    error = serializers.CharField(help_text="Why not, in words; empty when reachable.")
    down_since = serializers.DateTimeField(
        allow_null=True,
        help_text="Since when it is away: the first failure anyone saw (kept in Redis); "
        "null when reachable, or when Redis cannot say.",
    )


class QueuedBatchSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    plan = serializers.CharField()
    status = serializers.CharField()
    waiting_for = serializers.CharField(help_text="Why it waits, as of this answer.")


class HealthSerializer(serializers.Serializer[Any]):
    healthy = serializers.BooleanField()
    problems = serializers.ListField(child=serializers.CharField())
    workers = ProcessHealthSerializer(many=True)
    beat = ProcessHealthSerializer()
    sweeper = ProcessHealthSerializer()
    broker = ReachabilitySerializer()
    database = ReachabilitySerializer()
    queued = QueuedBatchSerializer(
        many=True, allow_null=True, help_text="null while the results database is away."
    )
    web = ProcessHealthSerializer(
        allow_null=True,
        help_text="The web server: its workers beat while their supervisor lives; null "
        "until it has beaten.",
    )


class Health(APIView):
    """Workers, beat and the sweeper with their last heartbeat, Redis and the results
    database, queued batches and why they wait. HTTP 503, same body, when something is
    gone or unreachable.

    While the results database is down the answer still comes, from Redis, to a token
    the database verified within BENCHDASH_HEALTH_TOKEN_MEMORY_S (runs/api/auth.py); any
    other caller gets the database-down error then, as from every endpoint."""

    def get_authenticators(self) -> list[Any]:
        return [TokenAuthentication(recalls=True), SessionAuthentication()]

    @extend_schema(operation_id="health", responses={200: HealthSerializer, 503: HealthSerializer})
    def get(self, request: Request) -> Response:
        report = health.health_report()
        return Response(report.as_dict(), status=200 if report.healthy else 503)
