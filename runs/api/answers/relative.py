"""A batch's relative table, for scripts: GET /api/v1/batches/{id}/relative (JSON, or CSV
with ?format=csv): per test (grouped by family) or per cell, the throughput against the
first of the compared values, its 95 % interval and verdict (Holm over each family), and
the cost per transaction (runs/analysis/relative.py builds it)."""

from __future__ import annotations

from typing import Any

from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import renderers, serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.api.common import QueryParameters
from runs.api.runs import SamplesCSVRenderer
from runs.http.responses import streamed
from runs.services import selectors
from runs.services.answers import relative


class RelativeQuery(QueryParameters):
    axis = serializers.CharField(
        required=False,
        max_length=200,
        help_text='The columns: "server" (targets, installs, configs), "threads", or a '
        "setting's or an option's name; by default the first that varies (in `axes`). One "
        "the batch does not vary is a 400 naming those it does.",
    )


class RelativeTableSerializer(serializers.Serializer[Any]):
    axis = serializers.CharField(help_text="The axis whose values are the columns.")
    axes = serializers.ListField(child=serializers.CharField(), help_text="Those to choose from.")
    columns = serializers.ListField(
        child=serializers.CharField(), help_text="The compared values; the first the baseline."
    )
    baseline = serializers.CharField()
    unit = serializers.CharField()
    summary = serializers.CharField(help_text="Which families moved, and by how much.")
    io_source = serializers.CharField(
        help_text='Whose I/O the read and write KB are: "server process" (the database '
        "server's own processes, /proc/<pid>/io), \"machine's disks\" (the server host's "
        'disks, neighbours\' I/O included: its /proc/<pid>/io could not be read), "mixed" '
        'when cells differ (each cell\'s per_tx.io_source says), "" when unmeasured.'
    )
    families = serializers.JSONField(
        help_text="[{name, rows: [{label, test, cells: [{column, n, throughput, verdict "
        "(ratio, ratio_low, ratio_high, text, p_adjusted...; null in the baseline's column), "
        "tone, per_tx: {cpu_us, csw, read_kb, write_kb, io_source, io_why: why not the server's "
        "own I/O, when a repeat said}, qps, rqps (queries a second against "
        "the baseline's: ratio of geometric means; null there), per_query: {the same as "
        "per_tx, over the queries a transaction made}}]}], moves: [{column, ratio, faster, "
        "slower, tested, untested, text}]}]: `untested` cells had too few repeats for a "
        "verdict and count in no other figure"
    )


class BatchRelative(APIView):
    """The relative table; 404 with a reason when nothing varies between the runs. JSON,
    or CSV with ?format=csv or Accept: text/csv (one line per row and column)."""

    renderer_classes = [renderers.JSONRenderer, renderers.BrowsableAPIRenderer, SamplesCSVRenderer]

    @extend_schema(
        parameters=[
            RelativeQuery,
            OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], required=False),
        ],
        responses={200: RelativeTableSerializer, (200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        query = RelativeQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        batch = get_object_or_404(selectors.batches_with_plan(), pk=pk)
        axis = query.validated_data.get("axis", "")
        if request.accepted_renderer.format == SamplesCSVRenderer.format:
            rows = relative.batch_relative_csv(batch=batch, axis=axis)
            return streamed(request._request, rows, content_type="text/csv; charset=utf-8")
        table = relative.batch_relative(batch=batch, axis=axis)
        if table is None:
            raise NotFound("nothing varies between this batch's runs: no table to make")
        return Response(RelativeTableSerializer(table.to_dict()).data)
