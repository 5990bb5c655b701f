"""Pages, JSON and CSV come gzipped when the browser asks for it, and so do a finished
run's events, sent whole; a live run's event stream never does."""

from __future__ import annotations

import gzip
import json
import re

from django.test import Client

from runs.models import Run, Status
from runs.services.answers import held
from runs.web.views import results as results_views

GZIP = {"Accept-Encoding": "gzip, deflate, br"}


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_a_results_page_comes_gzipped_only_when_asked(client_in: Client, make_batch):
    batch = make_batch(threads=(1, 2, 4), repeats=2, samples=60)
    url = f"/batches/{batch.pk}/results"

    plain = client_in.get(url)
    packed = client_in.get(url, headers=GZIP)

    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    html = gzip.decompress(packed.content).decode()
    assert 'id="report-table"' in html and "<h1>Results of batch" in html
    assert len(packed.content) * 3 < len(plain.content)


def test_json_and_csv_answers_and_streamed_exports_come_gzipped(client_in: Client, make_batch):
    batch = make_batch(threads=(1, 2), repeats=1, samples=200)

    run = batch.runs.get(position=0)
    samples = client_in.get(f"/api/v1/runs/{run.pk}/samples", headers=GZIP)
    export = client_in.get(f"/batches/{batch.pk}/export.csv?what=samples", headers=GZIP)
    document = client_in.get(f"/batches/{batch.pk}/export.json", headers=GZIP)

    assert samples["Content-Encoding"] == "gzip"
    assert b'"last_seq":200' in gzip.decompress(samples.content)
    assert export["Content-Encoding"] == document["Content-Encoding"] == "gzip"
    assert len(gzip.decompress(body(export)).decode().splitlines()) == 1 + 4 * 200
    assert b'"runs": [' in gzip.decompress(body(document))


def test_a_live_runs_event_stream_is_never_compressed(client_in: Client, make_batch):
    batch = make_batch(status=Status.RUNNING)
    run = Run.objects.create(
        batch=batch, position=0, round=0, cell_key="c", threads=1, status=Status.RUNNING
    )

    events = client_in.get(f"/runs/{run.pk}/events", headers=GZIP)

    assert events.streaming and events["Content-Type"] == "text/event-stream"
    assert "Content-Encoding" not in events
    events.close()


def sse(text: str) -> list[tuple[str, str | None, dict]]:
    """(event, id, data) of each event of a stream's text."""
    found = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            found.append((fields["event"], fields.get("id"), json.loads(fields["data"])))
    return found


def test_a_finished_runs_events_come_whole_compressed_and_complete(client_in: Client, make_batch):
    batch = make_batch(threads=(1,), repeats=1, samples=300)
    run = batch.runs.get(position=0)
    stored = list(run.samples.order_by("seq").values_list("seq", "tps", "latency_ms"))

    events = client_in.get(f"/runs/{run.pk}/events", headers=GZIP)
    resumed = client_in.get(f"/runs/{run.pk}/events?after=250", headers=GZIP)

    assert not events.streaming and events["Content-Type"] == "text/event-stream"
    assert events["Content-Encoding"] == "gzip"
    text = gzip.decompress(events.content).decode()
    found = sse(text)
    assert [kind for kind, _, _ in found] == ["status"] + ["sample"] * 300 + ["end"]
    assert found[0][2]["status"] == "done"
    samples = [(int(i or 0), data) for kind, i, data in found if kind == "sample"]
    # what the chart shows of each sample, each with its sequence number as its id
    assert [(i, d["seq"], d["tps"], d["latency_ms"]) for i, d in samples] == [
        (seq, seq, tps, latency) for seq, tps, latency in stored
    ]
    assert set(samples[0][1]) == {"seq", "time_s", "tps", "qps", "latency_ms", "latency_pct"}
    assert len(events.content) < len(text) / 4
    again = sse(gzip.decompress(resumed.content).decode())
    assert [d["seq"] for kind, _, d in again if kind == "sample"] == list(range(251, 301))


def test_a_whole_answer_is_gzipped_with_a_random_name_against_breach(client_in: Client, make_batch):
    # The random file name Django puts in the gzip header against BREACH: lengths vary.
    batch = make_batch(threads=(1, 2), repeats=2, samples=60)
    url = f"/batches/{batch.pk}/results"
    plain = client_in.get(url).content
    packed = [client_in.get(url, headers=GZIP) for _ in range(8)]

    pages = [gzip.decompress(p.content) for p in packed]
    # the same page (its CSRF token is masked anew on each answer, at the same length)
    assert all(len(page) == len(plain) and b"<h1>Results of batch" in page for page in pages)
    assert all(p.content[3] & 0x08 for p in packed)  # FNAME set: a name follows the header
    assert all(p.content[8] == 4 for p in packed)  # XFL 4: the fastest level (CPU over bytes)
    assert len({len(p.content) for p in packed}) > 1
    assert all(p["Content-Length"] == str(len(p.content)) for p in packed)


TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def shown(page: bytes) -> str:
    """The page without its form token (masked anew for every response)."""
    return TOKEN.sub('name="csrfmiddlewaretoken" value=""', page.decode())


def test_a_stored_results_page_is_sent_around_its_part_compressed_once(
    client_in: Client, make_batch
):
    batch = make_batch(threads=(1, 2), repeats=2, samples=60)
    url = f"/batches/{batch.pk}/results"
    plain = client_in.get(url).content  # the answer stored
    held.forget_all()

    first, second = client_in.get(url, headers=GZIP), client_in.get(url, headers=GZIP)

    assert len(held.etags(results_views.DEFLATED)) == 1  # deflated once, sent twice
    for packed in (first, second):
        assert packed["Content-Encoding"] == "gzip"
        assert shown(gzip.decompress(packed.content)) == shown(plain)
    assert first.content != second.content  # each header's random name


def test_a_stored_page_with_bidi_controls_is_shown_and_compressed_whole(
    client_in: Client, make_batch, stored_plan
):
    stored_plan.name = "plan \u202egnp.exe"
    stored_plan.save()
    batch = make_batch(threads=(1,), repeats=1, samples=3)

    html = gzip.decompress(client_in.get(f"/batches/{batch.pk}/results", headers=GZIP).content)

    assert "\u202e".encode() not in html and b"plan [U+202E]gnp.exe" in html


def test_the_api_results_come_compressed_once_for_every_asker(client_in: Client, make_batch):
    batch = make_batch(threads=(1, 2), repeats=2, samples=60)
    url = f"/api/v1/batches/{batch.pk}/results"
    plain = client_in.get(url).json()

    packed = [client_in.get(url, headers=GZIP) for _ in range(2)]

    assert all(p["Content-Encoding"] == "gzip" for p in packed)
    assert [json.loads(gzip.decompress(p.content)) for p in packed] == [plain, plain]
