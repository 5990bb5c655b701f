"""The nightly verdict, for scripts: each scheduled batch's regression check (per cell, the
figure against the median and noise of the previous nights, the steps of its series, and
whether a new slower step alerted), and a plan's night-by-night table with each cell's
steps, as its history page draws it (runs/services/nightly/history.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import renderers, serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.analysis.nightly import change_points, regressions
from runs.api.common import QueryParameters
from runs.api.nightly import alerts as alert_api
from runs.errors import InvalidInput
from runs.models import LaunchedBy, Plan, Status
from runs.services.nightly import history

VERDICTS = [
    regressions.REGRESSION,
    regressions.IMPROVEMENT,
    regressions.OUTLIER,
    regressions.STEADY,
    regressions.NOT_ENOUGH,
    regressions.NO_FIGURE,
]


# --- a batch's check ------------------------------------------------------------------------


class CheckSerializer(serializers.Serializer[Any]):
    """One figure of a cell against its baseline."""

    metric = serializers.ChoiceField(choices=["throughput", "latency"])
    name = serializers.CharField(help_text="tps, events/s, MiB/s; p95 ...")
    unit = serializers.CharField(allow_blank=True, help_text='"" for rates, "ms" for latency.')
    verdict = serializers.ChoiceField(choices=VERDICTS)
    value = serializers.FloatField(allow_null=True, help_text="This night's median.")
    baseline = serializers.FloatField(allow_null=True, help_text="Median of the nights before.")
    change_pct = serializers.FloatField(allow_null=True)
    noise_pct = serializers.FloatField(allow_null=True, help_text="1.4826 x MAD, in percent.")
    threshold_pct = serializers.FloatField(allow_null=True, help_text="The plan's.")
    limit_pct = serializers.FloatField(
        allow_null=True, help_text="max(threshold, 3 x noise): what a change must exceed."
    )
    nights = serializers.IntegerField(help_text="Nights the baseline is made of.")
    text = serializers.CharField(allow_blank=True)
    rule = serializers.CharField(allow_blank=True)


class StepSerializer(serializers.Serializer[Any]):
    """A change point of a cell's figure: the night it stepped, by how much, which way."""

    metric = serializers.ChoiceField(choices=["throughput", "latency"])
    name = serializers.CharField(help_text="tps, events/s, MiB/s; p95 ...")
    batch = serializers.IntegerField(
        allow_null=True, help_text="The scheduled batch of the first night after the step."
    )
    before = serializers.FloatField(
        help_text="Geometric mean of the nights since the previous step."
    )
    after = serializers.FloatField(help_text="Geometric mean of the nights until the next step.")
    change_pct = serializers.FloatField(help_text="(after - before) / before, in percent.")
    low_pct = serializers.FloatField(
        help_text="The 95 % interval of change_pct: low end (on the nights' logarithms: "
        "never below -100)."
    )
    high_pct = serializers.FloatField(help_text="The 95 % interval of change_pct: high end.")
    direction = serializers.ChoiceField(choices=[change_points.SLOWER, change_points.FASTER])
    pvalue = serializers.FloatField(help_text="Student's t-test of the two sides.")
    text = serializers.CharField()


class CheckStepSerializer(StepSerializer):
    """A step as the nightly check saw it: new (tonight, or unseen by the previous
    check) and alerted (new, slower, at least the plan's threshold) or not."""

    nights_ago = serializers.IntegerField(help_text="0: the step is at this night.")
    new = serializers.BooleanField()
    alert = serializers.BooleanField()


class CellCheckSerializer(serializers.Serializer[Any]):
    identity = serializers.CharField(help_text="The cell's parameters, fingerprinted.")
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label
    threads = serializers.IntegerField()
    settings = serializers.DictField(child=serializers.CharField())
    options = serializers.DictField(child=serializers.CharField())
    repeats = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=VERDICTS)
    flagged = serializers.BooleanField(help_text="Alerted: a new slower step.")
    checks = CheckSerializer(many=True)
    steps = CheckStepSerializer(
        many=True, required=False, help_text="Absent from checks made before steps were."
    )


class RuleSerializer(serializers.Serializer[Any]):
    text = serializers.CharField()
    threshold_pct = serializers.FloatField()
    noise_sigmas = serializers.FloatField()
    window = serializers.IntegerField(help_text="Previous nights a baseline is made of.")
    min_nights = serializers.IntegerField()
    step_nights = serializers.IntegerField(
        required=False, help_text="Nights the steps are looked for over, tonight included."
    )
    step_max_pvalue = serializers.FloatField(required=False)
    step_min_pct = serializers.FloatField(
        required=False, help_text="Steps smaller than this are not reported."
    )


class AnalysisSerializer(serializers.Serializer[Any]):
    """A scheduled batch's regression check against the plan's previous nights."""

    status = serializers.ChoiceField(choices=VERDICTS, help_text="The night's verdict.")
    summary = serializers.CharField()
    rule = RuleSerializer()
    flagged = serializers.ListField(
        child=serializers.CharField(), help_text="Labels of the cells that regressed."
    )
    cells = CellCheckSerializer(many=True)
    batch_status = serializers.ChoiceField(choices=Status.choices)
    analysed_at = serializers.DateTimeField()


# --- a plan's history -------------------------------------------------------------------------


class HistoryQuerySerializer(QueryParameters):
    nights = serializers.IntegerField(
        min_value=1,
        max_value=history.MAX_NIGHTS_SHOWN,
        default=60,
        help_text="How many scheduled batches a page holds.",
    )
    before = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text="The page of the nights before this batch (the newest page without): "
        "follow `next` for older nights.",
    )
    launched = serializers.ChoiceField(
        choices=list(history.LAUNCHED),
        default="all",
        help_text="Which batches: every launch (`all`, the default, as the history page), "
        "the scheduled ones (`schedule`), those launched by hand (`hand`: the page, the API "
        "or the command), or one way (`ui`, `api`, `cli`).",
    )


class HistoryStepSerializer(StepSerializer):
    created_at = serializers.DateTimeField(help_text="When the night after the step ran.")


class HistoryCellSerializer(serializers.Serializer[Any]):
    id = serializers.CharField(help_text="The cell's identity.")
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label
    threads = serializers.IntegerField()
    steps = HistoryStepSerializer(many=True, help_text="The cell's change points, oldest first.")


class NightCellSerializer(serializers.Serializer[Any]):
    id = serializers.CharField(help_text="The cell's identity, as in `cells`.")
    throughput = serializers.FloatField(allow_null=True)
    latency_ms = serializers.FloatField(allow_null=True)
    repeats = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=VERDICTS, allow_null=True)
    flagged = serializers.BooleanField()
    checks = CheckSerializer(many=True)


class NightSerializer(serializers.Serializer[Any]):
    batch = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    launched_by = serializers.ChoiceField(choices=LaunchedBy.choices)
    status = serializers.ChoiceField(choices=Status.choices)
    error = serializers.CharField(allow_blank=True)
    verdict = serializers.ChoiceField(
        choices=VERDICTS, allow_null=True, help_text="Null until the night is checked."
    )
    summary = serializers.CharField(allow_blank=True)
    flags = serializers.ListField(child=serializers.CharField())
    notified = serializers.ListField(
        child=serializers.DictField(), help_text="Mails and webhooks sent, or why not."
    )
    cells = NightCellSerializer(many=True)


class PlanHistorySerializer(serializers.Serializer[Any]):
    plan = serializers.IntegerField()
    unit = serializers.CharField(help_text="Throughput unit: tps, events/s or MiB/s.")
    latency = serializers.CharField(help_text="The latency figure: p95 ...")
    rule = RuleSerializer()
    cells = HistoryCellSerializer(many=True)
    nights = NightSerializer(many=True, help_text="This page's scheduled batches, newest first.")
    next = serializers.URLField(allow_null=True, help_text="The page of older nights.")
    previous = serializers.URLField(
        allow_null=True, help_text="The page of newer nights; null on the newest page."
    )
    baseline_from = serializers.DateTimeField(
        allow_null=True, help_text="The accepted baseline: nights before it judge nothing."
    )
    alert_counts = alert_api.AlertCountsSerializer()
    alerts = alert_api.AlertSerializer(many=True, help_text="The plan's alerts, newest first.")
    annotations = alert_api.AnnotationSerializer(many=True, help_text="Marks on the timeline.")


class HistoryJSONRenderer(renderers.JSONRenderer):
    """JSON by orjson: a page of the history is some 10 kB a night, which the standard
    library's encoder takes 0.3 ms a night to write, orjson a fifth of that. Same text:
    datetimes in ISO 8601 with Z, as the REST framework writes them."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        try:
            return orjson.dumps(data, option=orjson.OPT_UTC_Z)
        except TypeError:  # a type orjson does not know: the REST framework's encoder does
            return super().render(data, accepted_media_type, renderer_context)


class PlanHistory(APIView):
    """The plan's scheduled batches, newest first, night by night, a page of `nights` at a
    time: status, verdict and flags, and every cell's figures and checks, as the history
    page draws them. The cells' steps are those of the page's nights."""

    renderer_classes = [HistoryJSONRenderer, renderers.BrowsableAPIRenderer]

    @extend_schema(
        operation_id="plans_history",
        parameters=[HistoryQuerySerializer],
        responses={200: PlanHistorySerializer},
    )
    def get(self, request: Request, pk: int) -> Response:
        plan = get_object_or_404(Plan, pk=pk)
        query = HistoryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        nights = query.validated_data["nights"]
        launched = query.validated_data["launched"]
        try:
            past = history.plan_history(
                plan=plan,
                nights=nights,
                before=query.validated_data.get("before"),
                launched=launched,
            )
        except InvalidInput as refused:  # a cursor to no night of this plan: no such page
            raise NotFound(refused.message) from refused
        rule = regressions.Analysis(
            threshold_pct=plan.regression_threshold_pct,
            window=max(plan.history_nights, regressions.MIN_NIGHTS),
        ).to_dict()["rule"]
        body = {
            "plan": plan.pk,
            "rule": rule,
            **past.table(),
            **alert_api.history_extras(plan),
            **_links(request, nights, past, launched),
        }
        # The table is made of plain values in the serializer's shape already (the schema
        # says so, and tests/api/test_schema.py checks answers against it): going through
        # the serializer's fields cost 3 ms a night of 12 cells.
        return Response(body)


def _links(
    request: Request, nights: int, past: history.PlanHistory, launched: str
) -> dict[str, str | None]:
    """The URLs of the pages of older and newer nights, None where there is none."""
    page = past.page
    url = request.build_absolute_uri(request.path) + f"?nights={nights}"
    url += f"&launched={launched}" if launched != "all" else ""
    return {
        "next": f"{url}&before={page.older}" if page and page.older is not None else None,
        "previous": (
            url + (f"&before={page.newer}" if page.newer is not None else "")
            if page and page.has_newer
            else None
        ),
    }
