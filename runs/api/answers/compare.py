"""GET /api/v1/compare: what the compare page shows, for scripts. Batches and runs side by
side, the first the baseline; cell by cell, the difference with its 95 % interval and
Welch's verdict (runs/analysis/comparison.py and verdicts.py, the same code as the page's).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.analysis import batch_results, comparison, results
from runs.analysis.noise import multiplicity
from runs.analysis.why import inside
from runs.api.common import QueryParameters
from runs.services.answers import compare

MAX_SIDES = 8  # as many as the compare page takes
_ID = "[0-9]{1,18}"  # ids fit a bigint
_IDS = rf"^{_ID}(,{_ID}){{0,{MAX_SIDES - 1}}}$"
_KEYS = rf"^[br]{_ID}(,[br]{_ID}){{0,{MAX_SIDES - 1}}}$"


# --- what goes in and out -----------------------------------------------------------------


class CompareQuerySerializer(QueryParameters):
    sides = serializers.RegexField(
        _KEYS,
        required=False,
        help_text="Batches and runs in order, the first the baseline: b12,b13,r345 "
        "(as the compare page's ?s=). Used instead of batches and runs when given.",
    )
    batches = serializers.RegexField(
        _IDS, required=False, help_text="Batch ids, comma-separated: 12,13."
    )
    runs = serializers.RegexField(
        _IDS, required=False, help_text="Run ids, comma-separated, after the batches."
    )


class SpreadSerializer(serializers.Serializer[Any]):
    n = serializers.IntegerField()
    mean = serializers.FloatField()
    median = serializers.FloatField()
    stddev = serializers.FloatField(allow_null=True)
    cv = serializers.FloatField(allow_null=True)
    min = serializers.FloatField()
    max = serializers.FloatField()


class CompareRowSerializer(serializers.Serializer[Any]):
    label = serializers.CharField(  # type: ignore[assignment]  # a field, not Field.label
        help_text="The cell's settings and option values."
    )
    threads = serializers.IntegerField()
    base = SpreadSerializer(allow_null=True, help_text="The baseline's repeats of the cell.")
    other = SpreadSerializer(allow_null=True, help_text="This side's repeats of the cell.")
    diff_percent = serializers.FloatField(
        allow_null=True, help_text="(mean - baseline mean) / baseline mean x 100."
    )
    verdict = serializers.CharField(
        allow_null=True,
        help_text="Welch's t-test at 95 % on the logs of the throughput, its p-value adjusted "
        "for the number of cells on the page (Holm): faster, slower, no significant "
        "difference, too few repeats (fewer than 3 a side; two single runs are "
        "tested on their interval samples instead); null when the cell is on one side only.",
    )
    verdict_text = serializers.CharField(
        allow_null=True, help_text='The verdict in words: "too few repeats (n=2; 3 needed)".'
    )
    ratio = serializers.FloatField(allow_null=True, help_text="Of the geometric means.")
    ratio_low = serializers.FloatField(allow_null=True, help_text="95 % confidence interval.")
    ratio_high = serializers.FloatField(allow_null=True)
    diff_low_percent = serializers.FloatField(allow_null=True)
    diff_high_percent = serializers.FloatField(allow_null=True)
    basis = serializers.CharField(
        allow_null=True, help_text="repeats, or intervals for two single runs."
    )
    caveat = serializers.CharField(allow_null=True, allow_blank=True)
    sentence = serializers.CharField(allow_null=True, help_text="The answer in a sentence.")
    p_value = serializers.FloatField(allow_null=True, help_text="The cell's own p-value.")
    p_adjusted = serializers.FloatField(
        allow_null=True,
        help_text="Adjusted for the number of cells on the page (Holm): the verdict reads it.",
    )
    base_throughput = serializers.FloatField(
        allow_null=True,
        help_text="The geometric mean of the baseline's repeats: ratio is their quotient.",
    )
    other_throughput = serializers.FloatField(
        allow_null=True, help_text="The geometric mean of this side's repeats."
    )
    base_latency_ms = serializers.FloatField(allow_null=True)
    other_latency_ms = serializers.FloatField(allow_null=True)
    latency_diff_pct = serializers.FloatField(allow_null=True)


class CompareSideSerializer(serializers.Serializer[Any]):
    key = serializers.CharField(help_text="b<batch id> or r<run id>.")
    kind = serializers.ChoiceField(choices=["batch", "run"])
    id = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label
    runs = serializers.IntegerField(help_text="Runs on this side.")
    unit = serializers.CharField(help_text="Throughput unit: tps, events/s or MiB/s.")


class ComparePairSerializer(serializers.Serializer[Any]):
    side = serializers.CharField(help_text="The key of the side compared with the baseline.")
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label
    rows = CompareRowSerializer(many=True)
    caveats = serializers.ListField(
        child=serializers.CharField(),
        help_text="Why this comparison may mislead: the sides ran at different times or under "
        "different host load; an interleaved A/A or A/B in one batch is the stronger test.",
    )
    waits_moved = serializers.ListField(
        child=serializers.DictField(),
        help_text="Cell by cell (label, threads, moved): what moved in the server's own waits "
        "per transaction against the baseline (performance_schema, or PostgreSQL's sampled "
        "waits), when both sides have them.",
    )


class CompareSerializer(serializers.Serializer[Any]):
    baseline = serializers.CharField(allow_null=True)
    sides = CompareSideSerializer(many=True)
    pairs = ComparePairSerializer(many=True)
    correction = serializers.CharField(
        help_text="How the verdicts of all the cells are corrected together: Holm."
    )
    page = serializers.CharField(help_text="The compare page showing the same.")
    latency_label = serializers.CharField(
        help_text='The latency percentile of the rows\' latency figures, e.g. "p99"; the '
        'sides\' own, joined ("p95/p99"), when they measured different ones.'
    )


# --- the view -------------------------------------------------------------------------------


class Compare(APIView):
    """Batches and runs side by side, as the compare page shows them: for every other side,
    cell by cell against the baseline (the first side), the difference in percent and a
    verdict. No side given: nothing to compare, an empty answer."""

    @extend_schema(
        parameters=[CompareQuerySerializer],
        responses={
            200: CompareSerializer,
            404: OpenApiResponse(description="A batch or run asked for does not exist"),
        },
    )
    def get(self, request: Request) -> Response:
        query = CompareQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        keys = compare_keys(query.validated_data)
        sides = _sides_or_404(keys)
        base = sides[0][0] if sides else None
        pairs = [
            {
                "side": pair.side.key,
                "label": pair.side.label,
                "rows": [_row(row) for row in pair.rows],
                "caveats": pair.caveats,
                "waits_moved": inside.cells_moved(base.runs, pair.side.runs, pair.side.label)
                if base
                else [],
            }
            for pair in comparison.compare_all([side for side, _ in sides])
        ]
        page = reverse("compare") + ("?" + urlencode([("s", k) for k in keys]) if keys else "")
        body = {
            "baseline": base.key if base else None,
            "sides": [_side(side, number) for side, number in sides],
            "pairs": pairs,
            "correction": multiplicity.DESCRIPTION,
            "page": request.build_absolute_uri(page),
            "latency_label": "/".join(
                dict.fromkeys(batch_results.latency_label(side.runs, {}) for side, _ in sides)
            )
            or "p95",
        }
        return Response(CompareSerializer(body).data)


def compare_keys(given: dict[str, str]) -> list[str]:
    """The sides asked for, in order, each once: b12, r345 ..."""
    if given.get("sides"):
        keys = given["sides"].split(",")
    else:
        keys = [f"b{i}" for i in _split(given.get("batches"))]
        keys += [f"r{i}" for i in _split(given.get("runs"))]
    keys = [k[0] + str(int(k[1:])) for k in keys]  # b007 is b7
    return list(dict.fromkeys(keys))[:MAX_SIDES]


def _split(ids: str | None) -> list[str]:
    return ids.split(",") if ids else []


def _sides_or_404(keys: list[str]) -> list[tuple[comparison.Side, int]]:
    """Each side with the id it stands for, in the order asked; 404 for one that is not."""
    found = compare.comparison_sides(keys=keys)
    for key in keys:
        if key not in found:
            kind = "batch" if key[0] == "b" else "run"
            raise NotFound(f"{kind} {key[1:]} does not exist")
    return [(found[key], int(key[1:])) for key in keys]


def _side(side: comparison.Side, number: int) -> dict[str, Any]:
    return {
        "key": side.key,
        "kind": "batch" if side.key[0] == "b" else "run",
        "id": number,
        "label": side.label,
        "runs": len(side.runs),
        "unit": results.throughput_unit(side.runs),
    }


def _row(row: comparison.PairRow) -> dict[str, Any]:
    verdict = row.verdict
    return {
        "label": row.label,
        "threads": row.threads,
        "base": row.base,
        "other": row.other,
        "diff_percent": verdict.diff_percent if verdict else None,
        "verdict": verdict.verdict if verdict else None,
        "verdict_text": verdict.text if verdict else None,
        "ratio": verdict.ratio if verdict else None,
        "ratio_low": verdict.low if verdict else None,
        "ratio_high": verdict.high if verdict else None,
        "diff_low_percent": verdict.diff_low_percent if verdict else None,
        "diff_high_percent": verdict.diff_high_percent if verdict else None,
        "basis": verdict.basis if verdict else None,
        "caveat": verdict.caveat if verdict else None,
        "sentence": row.sentence,
        "p_value": verdict.p_value if verdict else None,
        "p_adjusted": verdict.p_adjusted if verdict else None,
        "base_throughput": row.base_throughput,
        "other_throughput": row.other_throughput,
        "base_latency_ms": row.base_latency,
        "other_latency_ms": row.other_latency,
        "latency_diff_pct": row.latency_diff_pct,
    }
