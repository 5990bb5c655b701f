# ruff: noqa: RUF001  (the help texts show the times sign and dashes the results use)
"""A batch's results, for scripts: GET /api/v1/batches/{id}/results (the summary, a
verdict with its 95 % interval for every cell against the baseline, what the auto modes
found, why each extra run ran, the why model) and /report (the HTML report to share).
Both render the results the results page renders (runs/services/answers/results.py)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.analysis.batch_results import BatchResults
from runs.api.common import QueryParameters
from runs.http import deflated
from runs.http.responses import conditional
from runs.models import Batch
from runs.services import selectors
from runs.services.answers import held, reports, stored_header, stored_results, tpcc


class BaselineQuery(QueryParameters):
    baseline = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=10_000,
        help_text="Index of the baseline series, as the results page's ?baseline= (0: the first).",
    )


def _baseline(request: Request) -> int | None:
    query = BaselineQuery(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query.validated_data.get("baseline")


class VerdictSerializer(serializers.Serializer[Any]):
    series = serializers.CharField(
        help_text="The cell's series: the cell's identity but its threads, each part the plan "
        "varies, in this order: test, target, install, config, then its server settings and "
        'option values ("test=oltp_insert config=b0e0 flush=2"). A cell is its series and '
        "its threads: a run of another test, target, install or config is another cell."
    )
    against = serializers.CharField(
        required=False,
        help_text="The series it is set against: the baseline's, or, where an axis has more "
        "than two values, another value of that axis beside the baseline (config=b0e1).",
    )
    name = serializers.CharField(
        required=False, help_text='Both: "config=b0e0 against config=b0e1".'
    )
    threads = serializers.IntegerField()
    verdict = serializers.ChoiceField(
        choices=["faster", "slower", "no significant difference", "too few repeats",
                 "cannot compare"],
        help_text="Against the same threads of the series it is set against (against), by "
                  "Welch's t-test at 95 %, its p-value adjusted for all the verdicts tested "
                  "together (Holm).",
    )  # fmt: skip
    text = serializers.CharField(
        help_text='The verdict in words: "too few repeats (n=2; 3 needed)".'
    )
    ratio = serializers.FloatField(allow_null=True, help_text="Throughput / the baseline's.")
    ratio_low = serializers.FloatField(allow_null=True, help_text="95 % confidence interval.")
    ratio_high = serializers.FloatField(allow_null=True)
    diff_percent = serializers.FloatField(allow_null=True)
    diff_low_percent = serializers.FloatField(allow_null=True)
    diff_high_percent = serializers.FloatField(allow_null=True)
    difference = serializers.CharField(help_text='"2.2× faster", "−3.1 % to +2.0 %".')
    interval = serializers.CharField(help_text='"2.1–2.3×".')
    p_value = serializers.FloatField(allow_null=True, help_text="The cell's own p-value.")
    p_adjusted = serializers.FloatField(
        allow_null=True,
        help_text="Adjusted for the verdicts tested together: the verdict reads it.",
    )
    correction = serializers.CharField(
        allow_blank=True,
        help_text='"Holm\'s correction over 16 cells"; "over 3 comparisons" where pairs beside '
        "the baseline are tested too.",
    )
    n_base = serializers.IntegerField(help_text="Finished repeats of the cell it is set against.")
    n_other = serializers.IntegerField()
    basis = serializers.ChoiceField(
        choices=["repeats", "intervals", ""],
        help_text="What was tested: the repeats, or the interval samples of two single runs.",
    )
    caveat = serializers.CharField(allow_blank=True)
    power = serializers.CharField(
        allow_blank=True,
        help_text="When no significant difference was found, what these repeats could have "
        'seen: "with 3 repeats at this noise, a difference under 2.8× would go unseen; '
        '`repeats: auto` or 9 repeats would resolve 1.5×".',
    )


class ExtraRunSerializer(serializers.Serializer[Any]):
    position = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label
    status = serializers.CharField()
    reason = serializers.CharField(help_text="Why an auto mode added the run.")


class BatchResultsSerializer(serializers.Serializer[Any]):
    batch = serializers.IntegerField()
    unit = serializers.CharField(help_text="Throughput unit: tps, events/s or MiB/s.")
    series = serializers.ListField(child=serializers.CharField(), help_text="Series labels.")
    baseline = serializers.CharField(help_text="The baseline series.")
    summary = serializers.ListField(
        child=serializers.CharField(),
        help_text='"flush=0 is 2.2× faster than flush=1 at 1 thread (95 % CI 2.1–2.3×, ...)": '
        "each series against the baseline, then the pairs beside it (verdicts).",
    )
    verdicts = VerdictSerializer(many=True)
    estimator = serializers.CharField(
        help_text="How a cell's throughput is reduced over its repeats: the table's column, "
        'its ratio and the verdicts read the same one ("geometric mean of the repeats").'
    )
    latency_label = serializers.CharField(
        help_text="The latency percentile the plan asked for, as every latency figure is "
        'labelled: "p95", "p99".'
    )
    table = serializers.ListField(
        child=serializers.JSONField(),
        help_text="The report table, one cell a row by thread count then series: threads, "
        "series (key, label, colour), point (mean: the throughput by the estimator; low, high, "
        "n, qps, latency_ms: the median of the repeats' latency percentile; errors, failed), "
        "ratio to the baseline's mean, verdict, is_baseline.",
    )
    auto = serializers.ListField(
        child=serializers.CharField(), help_text="What the auto modes found."
    )
    extra_runs = ExtraRunSerializer(many=True)
    repeats_stops = serializers.ListField(
        child=serializers.JSONField(),
        help_text="Repeats auto: why each cell compared with the baseline stopped: series, "
        'threads, repeats, why ("decided faster after 3 repeats (p = ...)", "equivalent within '
        '±2 % ...", "reached the maximum of 10 repeats, undecided ...").',
    )
    why = serializers.ListField(
        child=serializers.JSONField(),
        help_text=(
            "The per-transaction time model of each pair: each side's budget per transaction "
            "(base.budget, other.budget: server CPU µs, off-CPU µs, context switches, I/Os, "
            "bytes written, log and binlog fsyncs) and what moved between them (moved)."
        ),
    )
    rate_chart = serializers.ListField(
        child=serializers.JSONField(),
        help_text="Open loop: achieved tps, p95 and queue against the offered rate.",
    )
    correction = serializers.CharField(
        allow_blank=True,
        help_text="How the verdicts are corrected together: \"Holm's correction over 16 "
        'cells" (family-wise error 5 %), "over 3 comparisons" with pairs beside the baseline.',
    )
    plan_wide = serializers.ListField(
        child=serializers.CharField(),
        help_text="What every run shares, said once rather than in every series' name: "
        '"max_connections=1100".',
    )
    host_metrics = serializers.ListField(
        child=serializers.JSONField(),
        help_text="Per cell: the server's and the load host's busy CPU %, iowait %, IOPS, "
        "MB/s, context switches and server CPU µs per transaction (medians over the "
        "repeats), and the cell's bottleneck with its evidence and guards.",
    )
    runs = serializers.ListField(
        child=serializers.JSONField(),
        help_text="Each run as sysbench's final report and its log say it: id, position, label, "
        'status, outcome (ok, forced_shutdown, error) and outcome_text ("forced shutdown, 200 '
        'transactions unfinished"), unfinished_transactions, errors by code (code, kind, count, '
        "message, hint), tps, qps, queries (read, write, other, total), latency (min, avg, max, "
        "percentile, percentile_value; ms), errors_per_s, reconnects_per_s, fairness "
        "(events_avg, events_stddev, exec_time_avg, exec_time_stddev), per_transaction "
        "([counter, per transaction]), and the run's page and raw log (url, log).",
    )
    report = serializers.URLField(help_text="The HTML report of the batch.")
    tpcc = serializers.JSONField(
        allow_null=True,
        help_text="A TPC-C batch's figures (null for another): cells, each with its label, "
        "repeats, tpmc (NewOrder per minute, the geometric mean of its repeats'; null where "
        "the script prints no NewOrders), tps, errors_per_s (ignored errors: deadlocks...), "
        "warehouses, table_sets, total_warehouses and mix ([{name, per_s, share}] where the "
        'script prints it); no_tpmc_reason (why there is no tpmC, or "").',
    )


class BatchResultsView(APIView):
    """The batch's results: the same as its results page, in JSON. A finished batch's are
    stored (with an ETag: If-None-Match gets a 304)."""

    @extend_schema(parameters=[BaselineQuery], responses={200: BatchResultsSerializer})
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        baseline = _baseline(request)
        batch = stored_header.header_with_stored(pk, baseline=baseline, part="results")
        if batch is None:
            raise Http404("No Batch matches the given query.")
        stored = stored_results.batch_stored_json(batch=batch, baseline=baseline)
        report = request.build_absolute_uri(reverse("api-batch-report", args=[batch.pk]))
        etag = stored_results.shown_etag(stored.etag, batch, "api", report)
        return conditional(request, etag, lambda: self._sent(request, batch, stored, report, etag))

    def _sent(
        self, request: Request, batch: Batch, stored: Any, report: str, etag: str | None
    ) -> HttpResponseBase:
        """The results; as JSON (what scripts ask for) of a stored answer, the bytes sent
        the first time, held by this process under the etag they were sent with
        (runs/services/answers/held.py): the serializer and the renderer made the same
        100 kB again for every request of a 200-run batch."""
        plain = type(request.accepted_renderer) is JSONRenderer
        if etag is None or not plain or request.accepted_media_type != JSONRenderer.media_type:
            return _results(request, batch, stored.value, report)
        key = f"{batch.pk}-{etag}"  # what is shown of the batch is in the etag; its id too
        body = held.value(key, "api")
        if body is held.MISSING:
            response = _results(request, batch, stored.value, report)
            response.accepted_renderer = request.accepted_renderer
            response.accepted_media_type = request.accepted_media_type
            response.renderer_context = self.get_renderer_context()  # type: ignore[attr-defined]
            # Compressed once too (runs/http/deflated.py): 1.5 ms of gzip a request.
            body = deflated.deflated(response.rendered_content)
            held.keep(key, "api", body, len(body.data) + len(body.blocks))
        sent = HttpResponse(body.data, content_type=JSONRenderer.media_type)
        return deflated.with_deflated(sent, b"", body, b"")


def _with_stored(baseline: int | None, part: str) -> QuerySet[Batch]:
    return stored_results.with_stored(selectors.batches_with_plan(), baseline=baseline, part=part)


def _results(request: Request, batch: Batch, found: dict[str, Any], report: str) -> Response:
    """`found`: BatchResults.to_json()."""
    body = {
        **found,
        "batch": batch.pk,
        "series": [s["label"] for s in found["series"]],
        "baseline": found["baseline_label"],
        "runs": _with_links(request, found.get("runs") or []),
        "report": report,
        # Made for the request, as the page's (two queries, for a TPC-C batch only).
        "tpcc": figures.to_json() if (figures := tpcc.batch_tpcc(batch)) else None,
    }
    return Response(BatchResultsSerializer(body).data)


# A run id no run has: each run's links are the links of this one with its own id, which
# saves two URL reversals a run (11.6 → 7.1 ms of CPU for the response of 200 runs).
_ANY_RUN = 987654321


def _with_links(request: Request, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    page = request.build_absolute_uri(reverse("run_live", args=[_ANY_RUN]))
    log = request.build_absolute_uri(reverse("api-run-log", args=[_ANY_RUN]))
    marker = str(_ANY_RUN)
    return [
        {
            **row,
            "url": page.replace(marker, str(row["id"])),
            "log": log.replace(marker, str(row["id"])),
        }
        for row in rows
    ]


class BatchReport(APIView):
    """The batch's report: one HTML file with its charts and data, readable offline."""

    @extend_schema(parameters=[BaselineQuery], responses={(200, "text/html"): OpenApiTypes.STR})
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        baseline = _baseline(request)
        batch = get_object_or_404(_with_stored(baseline, "results"), pk=pk)
        stored = stored_results.batch_stored(batch=batch, baseline=baseline)
        etag = stored_results.shown_etag(stored.etag, batch, "report")
        return conditional(request, etag, lambda: _report(batch, stored.value))


def _report(batch: Batch, found: BatchResults) -> HttpResponse:
    html = reports.batch_report_html(batch=batch, found=found)
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{reports.report_filename(batch)}"'
    return response
