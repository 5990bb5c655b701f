"""Exports of a batch are written as they are read: sent in pieces of bounded size, under
the test client (WSGI) as under an ASGI server, with the same rows the batch holds."""

from __future__ import annotations

import csv
import io
import json
import warnings
from typing import Any

from asgiref.sync import async_to_sync
from django.test import AsyncClient

from runs.http.responses import PIECE_CHARS
from runs.models import Run, Sample


def no_constants(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")


def pieces(response) -> list[bytes]:
    assert response.streaming
    return list(response.streaming_content)


def test_the_json_export_holds_every_run_and_sample_sent_in_bounded_pieces(client_in, make_batch):
    batch = make_batch(threads=(1, 2, 4, 8, 16), repeats=4, samples=500)
    first = batch.runs.get(position=0)
    Run.objects.filter(pk=first.pk).update(error="<script>alert(1)</script>")
    Sample.objects.filter(run=first, seq=7).update(tps=float("inf"))  # stored before the fix

    response = client_in.get(f"/batches/{batch.pk}/export.json")

    sent = pieces(response)
    assert response["Content-Disposition"] == f'attachment; filename="batch-{batch.pk}.json"'
    assert len(sent) > 10 and max(len(p) for p in sent) < 4 * PIECE_CHARS
    text = b"".join(sent).decode()
    assert "<script>" not in text
    document = json.loads(text, parse_constant=no_constants)
    assert document["batch"]["id"] == batch.pk
    assert document["batch"]["params"]["warmup_s"] == 5
    runs = document["runs"]
    assert [r["position"] for r in runs] == list(range(40))
    assert runs[0]["error"] == "<script>alert(1)</script>"
    assert all(len(r["samples"]) == 500 for r in runs)
    assert runs[0]["samples"][6]["tps"] is None
    assert runs[1]["samples"][0] == {
        "seq": 1, "time_s": 1.0, "threads": 2, "tps": runs[1]["samples"][0]["tps"],
        "qps": runs[1]["samples"][0]["qps"], "reads": None, "writes": None, "other": None,
        "latency_pct": 95.0, "latency_ms": 5.0, "errors_per_s": None, "reconnects_per_s": None,
        "queue_length": None, "concurrency": None, "in_warmup": True,
    }  # fmt: skip
    assert "s3cret-target-pw" not in text


def test_runs_and_samples_export_as_csv_in_bounded_pieces(client_in, make_batch):
    batch = make_batch(threads=(1, 2, 4, 8, 16), repeats=4, samples=500)

    runs_csv = client_in.get(f"/batches/{batch.pk}/export.csv?what=runs")
    rows = list(csv.DictReader(io.StringIO(b"".join(pieces(runs_csv)).decode())))
    assert runs_csv["Content-Disposition"] == f'attachment; filename="batch-{batch.pk}-runs.csv"'
    assert len(rows) == 40 and rows[0]["tps"] == "100.0"

    samples_csv = client_in.get(f"/batches/{batch.pk}/export.csv?what=samples")
    sent = pieces(samples_csv)
    assert len(sent) > 10 and max(len(p) for p in sent) < 4 * PIECE_CHARS
    samples = list(csv.DictReader(io.StringIO(b"".join(sent).decode())))
    assert len(samples) == 20_000
    assert (samples[0]["run_position"], samples[0]["seq"]) == ("0", "1")
    assert (samples[-1]["run_position"], samples[-1]["seq"]) == ("39", "500")


def test_under_asgi_the_exports_stream_instead_of_being_read_whole_first(user, make_batch):
    batch = make_batch(threads=(1, 2), repeats=1, samples=300)
    client = AsyncClient()
    client.force_login(user)

    async def fetch(url: str) -> list[bytes]:
        response: Any = await client.get(url)
        assert response.streaming and response.is_async
        return [piece async for piece in response.streaming_content]

    with warnings.catch_warnings():
        # Django warns when it reads a synchronous iterator whole before sending it.
        warnings.filterwarnings("error", message="StreamingHttpResponse must consume")
        document = b"".join(async_to_sync(fetch)(f"/batches/{batch.pk}/export.json"))
        samples = b"".join(async_to_sync(fetch)(f"/batches/{batch.pk}/export.csv?what=samples"))

    assert [len(r["samples"]) for r in json.loads(document)["runs"]] == [300] * 4
    assert len(samples.decode().splitlines()) == 1 + 4 * 300
