"""Alerts, for scripts: a plan's alerted nights with the re-run's verdict and what changed,
and the decisions on them (acknowledge, dismiss as noise, accept as the new baseline)
(runs/services/nightly/alerts.py). Notes and annotations are in runs/api/nightly/notes.py."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.api.nightly.notes import AnnotationSerializer
from runs.models import Alert, Annotation, Plan
from runs.services import permissions
from runs.services.nightly import alerts, confirming

STATUSES = [*Alert.State.values, alerts.UNCONFIRMED]


class ChangeSerializer(serializers.Serializer[Any]):
    """One difference between the flagged night and its baseline nights."""

    kind = serializers.ChoiceField(choices=["fact", "variable", "telemetry", "bottleneck"])
    name = serializers.CharField(help_text="server version, a variable's name, a figure ...")
    before = serializers.JSONField(help_text="The baseline nights' value (most common).")
    after = serializers.JSONField(help_text="The flagged night's value.")
    nights = serializers.IntegerField(help_text="Baseline nights that recorded it.")
    text = serializers.CharField()


class AlertCellSerializer(serializers.Serializer[Any]):
    identity = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label
    threads = serializers.IntegerField()
    settings = serializers.DictField(child=serializers.CharField())
    options = serializers.DictField(child=serializers.CharField())
    steps = serializers.ListField(
        child=serializers.DictField(), help_text="The alerted steps, as the check stored them."
    )
    checks = serializers.ListField(child=serializers.DictField())
    confirmation = serializers.DictField(
        required=False,
        help_text="What the re-run said: verdict (confirmed, noise, no figure) and, per "
        "step, the re-run's median, its 95 % interval, the step's levels and midpoint.",
    )


class AlertSerializer(serializers.ModelSerializer[Alert]):
    status = serializers.SerializerMethodField(
        help_text="The state, or `unconfirmed` when the re-run ended without an answer."
    )
    night_created_at = serializers.DateTimeField(source="batch.created_at", read_only=True)
    confirmation_status = serializers.SerializerMethodField()
    confirmation_due = serializers.SerializerMethodField(
        help_text="When the re-run's answer is due: the night's end plus the runs it plans "
        "(3 a flagged cell, each its duration and an allowance); later when a marginal step "
        "made it add repeats. Null once the alert is judged."
    )
    waiting_for = serializers.SerializerMethodField(
        help_text="What the re-run waits for now: the batch or worker it is queued behind, "
        "its runs done, why a repeat was added. Empty once the alert is judged."
    )
    cells = AlertCellSerializer(many=True, read_only=True)
    changes = ChangeSerializer(many=True, read_only=True)
    decided_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Alert
        fields = [
            "id",
            "plan",
            "batch",
            "night_created_at",
            "confirmation",
            "confirmation_status",
            "confirmation_due",
            "waiting_for",
            "state",
            "status",
            "verdict",
            "cells",
            "changes",
            "comment",
            "decided_by",
            "decided_at",
            "created_at",
        ]
        read_only_fields = fields

    def get_status(self, alert: Alert) -> str:
        return alerts.alert_status(alert)

    def get_confirmation_status(self, alert: Alert) -> str | None:
        return alert.confirmation.status if alert.confirmation else None

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_confirmation_due(self, alert: Alert) -> str | None:
        if alert.state != Alert.State.CONFIRMING or alert.verdict:
            return None
        due = confirming.confirmation_due(alert=alert)
        return serializers.DateTimeField().to_representation(due)

    def get_waiting_for(self, alert: Alert) -> str:
        return confirming.confirmation_waiting(alert=alert)


class AlertCountsSerializer(serializers.Serializer[Any]):
    total = serializers.IntegerField()
    confirmed = serializers.IntegerField(help_text="Re-runs that agreed with the alert.")
    noise = serializers.IntegerField(help_text="Re-runs that did not: nobody was told.")
    dismissed = serializers.IntegerField(help_text="Judged noise by a person.")
    acknowledged = serializers.IntegerField()
    accepted = serializers.IntegerField(help_text="Accepted as the new baseline.")
    confirming = serializers.IntegerField()
    unconfirmed = serializers.IntegerField(help_text="The re-run failed or was cancelled.")


class PlanAlertsSerializer(serializers.Serializer[Any]):
    plan = serializers.IntegerField()
    baseline_from = serializers.DateTimeField(allow_null=True)
    counts = AlertCountsSerializer()
    alerts = AlertSerializer(many=True)


def _alerts() -> Any:
    return Alert.objects.select_related("batch", "confirmation", "decided_by")


class PlanAlerts(APIView):
    """A plan's alerts, newest first, with how many were confirmed, noise or dismissed."""

    @extend_schema(operation_id="plans_alerts", responses={200: PlanAlertsSerializer})
    def get(self, request: Request, pk: int) -> Response:
        plan = get_object_or_404(Plan, pk=pk)
        found = list(_alerts().filter(plan=plan))
        body = {
            "plan": plan.pk,
            "baseline_from": plan.baseline_from,
            "counts": alerts.plan_alert_counts(plan=plan, found=found),
            "alerts": found,
        }
        return Response(PlanAlertsSerializer(body).data)


class AlertDetail(APIView):
    @extend_schema(operation_id="alerts_retrieve", responses={200: AlertSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(AlertSerializer(get_object_or_404(_alerts(), pk=pk)).data)


class DecisionSerializer(serializers.Serializer[Any]):
    decision = serializers.ChoiceField(
        choices=list(alerts.DECISIONS),
        help_text="acknowledge; dismiss (noise); accept (the new baseline: the plan's "
        "nights before the step no longer judge the nights after it).",
    )
    comment = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class AlertDecide(APIView):
    """Decide an alert: for who may change its plan."""

    @extend_schema(
        operation_id="alerts_decide", request=DecisionSerializer, responses={200: AlertSerializer}
    )
    def post(self, request: Request, pk: int) -> Response:
        alert = get_object_or_404(Alert.objects.select_related("plan"), pk=pk)
        permissions.require(request.user, "change", alert.plan)
        given = DecisionSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        alerts.alert_decide(alert=alert, user=request.user, **given.validated_data)
        return Response(AlertSerializer(_alerts().get(pk=pk)).data)


def history_extras(plan: Plan) -> dict[str, Any]:
    """What the history response adds for alerts, in plain values (the history response
    is written as it is, not through PlanHistorySerializer): the plan's baseline, the alert
    counts, the alerts and the annotations."""
    found = list(_alerts().filter(plan=plan))
    marks = Annotation.objects.filter(plan=plan).select_related("created_by")
    return {
        "baseline_from": plan.baseline_from,
        "alert_counts": AlertCountsSerializer(
            alerts.plan_alert_counts(plan=plan, found=found)
        ).data,
        "alerts": AlertSerializer(found, many=True).data,
        "annotations": AnnotationSerializer(marks, many=True).data,
    }
