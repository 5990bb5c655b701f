"""A finished batch's answer is built once and served as stored
(runs/services/answers/stored_results.py):
the results page, the API and the report read it with the batch in one query, send an
ETag and answer 304 to a client that holds it; a live batch's is built on each request.
(That the worker stores it as a batch ends: tests/api/test_results.py.)"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from runs.models import Batch, Run, StoredResults, Target
from runs.services import selectors, tokens
from runs.services.answers import held, stored_header, stored_results
from tests.web.test_results_pages import page_data


def keys(batch: Batch) -> list[str]:
    return sorted(StoredResults.objects.filter(batch=batch).values_list("key", flat=True))


def test_a_finished_batchs_page_is_stored_on_its_first_request_and_served_in_3_queries(
    client_in, make_batch, django_assert_max_num_queries, django_assert_num_queries
):
    batch = make_batch(threads=(1, 2, 4), repeats=3, samples=20)
    url = f"/batches/{batch.pk}/results"

    # built (the header read finding none, then the whole batch) and stored in one more
    with django_assert_max_num_queries(9):
        first = client_in.get(url)
    stored = StoredResults.objects.get(batch=batch)
    # The session, the user, and the batch with its answer: no run, no sample is read.
    with django_assert_num_queries(3):
        second = client_in.get(url)

    assert stored.key == "baseline=0"
    assert stored.etag.startswith(f"{stored_results.stored_version()}-")
    assert StoredResults.objects.get(batch=batch).computed_at == stored.computed_at  # not rebuilt
    assert page_data(second, "results-data") == page_data(first, "results-data")
    assert second.content.count(b'id="report-table"') == 1
    assert stored.content["results"]["baseline_label"] == "flush=1"
    assert "flush=2" in stored.content["html"]


def test_a_process_holds_an_answer_it_served_and_the_database_sends_its_text_no_more(
    client_in, make_batch
):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    url = f"/batches/{batch.pk}/results"
    built = client_in.get(url).content
    held.forget_all()

    def read() -> Any:  # a Batch with its stored answer's etag and part
        found = stored_results.with_stored(
            selectors.batches_with_plan(), baseline=None, part="html"
        )
        return found.get(pk=batch.pk)

    before = read()
    served = client_in.get(url).content  # read from the database, then held
    after = read()
    from_memory = client_in.get(url).content

    assert before.cached_etag and "<section" in before.cached_html
    assert after.cached_etag == before.cached_etag and after.cached_html is None
    assert _results_part(built) == _results_part(served) == _results_part(from_memory)


def test_an_answer_let_go_between_the_query_and_its_use_is_read_again(client_in, make_batch):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    stored_results.batch_results_store(batch=batch)
    client_in.get(f"/batches/{batch.pk}/results")  # held now
    found = stored_results.with_stored(selectors.batches_with_plan(), baseline=None, part="html")
    without_text: Any = found.get(pk=batch.pk)
    held.forget_all()  # another request's answers pushed it out meanwhile

    etag, html = stored_results._stored(without_text, None, "html")

    assert without_text.cached_html is None
    assert (
        etag == without_text.cached_etag
        and html == StoredResults.objects.get(batch=batch).content["html"]
    )


def _results_part(page: bytes) -> str:
    """The page without its header (whose CSRF token changes with every request)."""
    return page.decode().split("<main>", 1)[1]


def test_a_client_that_holds_the_page_gets_a_304_and_a_new_login_a_new_etag(
    client_in, make_batch, user
):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    url = f"/batches/{batch.pk}/results"

    page = client_in.get(url)
    etag = page["ETag"]
    again = client_in.get(url, HTTP_IF_NONE_MATCH=etag)
    other = client_in.get(url, HTTP_IF_NONE_MATCH='"not-this-one"')
    relogged = Client()
    relogged.force_login(user)
    relogged.get("/")  # a fresh login: a new CSRF token in the header's logout form

    assert page.status_code == 200 and etag.startswith('"')
    assert "private" in page["Cache-Control"] and "no-cache" not in page["Cache-Control"]
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    assert other.status_code == 200 and other["ETag"] == etag
    assert relogged.get(url)["ETag"] != etag


def test_a_baseline_asked_for_is_stored_under_its_index_and_odd_ones_add_nothing(
    client_in, make_batch
):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    url = f"/batches/{batch.pk}/results"

    first = client_in.get(url)
    swapped = client_in.get(f"{url}?baseline=1")
    for odd in ("7", "x", "-1"):
        assert client_in.get(f"{url}?baseline={odd}").status_code == 200

    assert keys(batch) == ["baseline=0", "baseline=1"]
    assert swapped["ETag"] != first["ETag"]
    assert '<option value="1" selected>flush=2</option>' in swapped.content.decode()
    swapped_again = client_in.get(f"{url}?baseline=1", HTTP_IF_NONE_MATCH=swapped["ETag"])
    assert swapped_again.status_code == 304


def test_runs_chosen_or_a_counter_are_built_for_the_request_without_an_etag(client_in, make_batch):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    run = batch.runs.order_by("position").first()
    assert run is not None

    chosen = client_in.get(f"/batches/{batch.pk}/results?runs={run.pk}")
    counter = client_in.get(f"/batches/{batch.pk}/results?counter=Innodb_data_fsyncs")

    assert chosen.status_code == counter.status_code == 200
    assert not chosen.has_header("ETag") and not counter.has_header("ETag")
    assert page_data(chosen, "results-data")["timeseries"][0]["run"] == run.pk
    assert keys(batch) == []


def test_a_live_batch_is_built_on_each_request_and_never_stored(client_in, make_batch):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    Batch.objects.filter(pk=batch.pk).update(status="running", finished_at=None)

    page = client_in.get(f"/batches/{batch.pk}/results")
    Run.objects.filter(batch=batch, threads=2).update(summary={"tps": 1.0})
    later = client_in.get(f"/batches/{batch.pk}/results")
    stored_results.batch_results_store(
        batch=Batch.objects.get(pk=batch.pk)
    )  # not finished: nothing

    assert page.status_code == 200 and not page.has_header("ETag")
    assert "no-cache" in page["Cache-Control"]
    assert page_data(later, "results-data") != page_data(page, "results-data")
    assert keys(batch) == []


def test_the_batchs_end_replaces_its_answers_and_an_answer_older_than_the_end_is_rebuilt(
    client_in, make_batch
):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    client_in.get(f"/batches/{batch.pk}/results?baseline=1")
    assert keys(batch) == ["baseline=1"]

    stored_results.batch_results_store(batch=batch)  # where a batch ends (batches.batch_execute)
    stored = StoredResults.objects.get(batch=batch)
    assert keys(batch) == ["baseline=0"]

    # A batch resumed and ended again (or its answer stored before the end was recorded):
    # the answer older than the end is not served but rebuilt.
    Batch.objects.filter(pk=batch.pk).update(finished_at=timezone.now() + timedelta(seconds=1))
    Run.objects.filter(batch=batch, threads=2).update(summary={"tps": 1.0})
    page = client_in.get(f"/batches/{batch.pk}/results")
    rebuilt = StoredResults.objects.get(batch=batch)
    assert rebuilt.etag != stored.etag and rebuilt.computed_at > stored.computed_at
    assert page["ETag"] and page_data(page, "results-data") == _scaling(rebuilt)


def _scaling(stored: StoredResults) -> dict:
    """The chart data of the page stored in an answer."""
    html = stored.content["html"]
    start = html.index('<script id="results-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start : html.index("</script>", start)])


def test_runs_edited_in_the_admin_forget_the_batchs_answers(make_batch, django_user_model):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    admin = Client()
    admin.force_login(django_user_model.objects.create_superuser("root", password="pw-root-1"))
    stored_results.batch_results_store(batch=batch)
    run = batch.runs.order_by("position").first()
    assert run is not None and keys(batch) == ["baseline=0"]

    deleted = admin.post(f"/admin/runs/run/{run.pk}/delete/", {"post": "yes"})

    assert deleted.status_code == 302 and not Run.objects.filter(pk=run.pk).exists()
    assert keys(batch) == []


def test_the_api_and_the_report_serve_the_stored_answer_with_their_own_etags(
    client_in, make_batch, user: User
):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    token = tokens.token_create(user=user, name="tests", expires_in=None)[1]
    auth = {"Authorization": f"Token {token}"}
    api = Client()

    body = api.get(f"/api/v1/batches/{batch.pk}/results?baseline=1", headers=auth)
    stored = StoredResults.objects.get(batch=batch, key="baseline=1")
    held = api.get(
        f"/api/v1/batches/{batch.pk}/results?baseline=1",
        headers={**auth, "If-None-Match": body["ETag"]},
    )
    report = client_in.get(f"/batches/{batch.pk}/report.html?baseline=1")
    report_held = client_in.get(
        f"/batches/{batch.pk}/report.html?baseline=1", HTTP_IF_NONE_MATCH=report["ETag"]
    )

    assert body.status_code == 200 and "private" in body["Cache-Control"]
    assert body.json()["summary"] == stored.content["results"]["summary"]
    assert body.json()["baseline"] == "flush=2"
    assert held.status_code == 304
    assert report.status_code == 200 and report["ETag"] != body["ETag"]
    assert report_held.status_code == 304
    assert keys(batch) == ["baseline=1"]  # the report read what the API stored


def test_the_compare_page_reads_a_finished_batchs_figures_from_its_stored_answer(
    client_in, make_batch
):
    one = make_batch(threads=(1, 2), repeats=3, samples=3)
    two = make_batch(threads=(1, 2), repeats=3, samples=3)
    Run.objects.filter(batch=two, threads=2).update(summary={"tps": 80.0, "latency_pct_ms": 3})
    url = f"/compare?s=b{one.pk}&s=b{two.pk}"
    read_from_runs = client_in.get(url).content.decode()
    stored_results.batch_results_store(batch=one)
    stored_results.batch_results_store(batch=two)

    with CaptureQueriesContext(connection) as queries:
        read_from_answers = client_in.get(url).content.decode()

    # No query of runs: the batch picker's query counts each batch's runs in a subquery
    # (issue 27's batch lists), which is a query of batches.
    assert not [
        q["sql"]
        for q in queries
        if 'FROM "runs_run"' in q["sql"] and 'FROM "runs_batch"' not in q["sql"]
    ]
    table = '<table class="table compare-table">'
    assert section(read_from_answers, table, "</table>") == section(
        read_from_runs, table, "</table>"
    )
    assert "slower" in section(read_from_answers, table, "</table>")


def section(html: str, start: str, end: str) -> str:
    begin = html.index(start)
    return html[begin : html.index(end, begin) + len(end)]


def test_a_target_given_its_cores_and_disks_refreshes_the_stored_answers(
    client_in, make_batch, stored_target
):
    # issue 37: the stored results page kept asking for the cores and disks the target's
    # page had just been given.
    Target.objects.filter(pk=stored_target.pk).update(cpu_cores=None, disk_count=None)
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    url = f"/batches/{batch.pk}/results"
    asking = client_in.get(url).content.decode()
    assert "needs the target's cores and disks" in asking and keys(batch) == ["baseline=0"]

    edit = {
        "name": stored_target.name, "engine": "mariadb", "host": "127.0.0.1", "port": "3999",
        "database": "sbtest", "user": "bench", "cpu_cores": "8", "disk_count": "2",
    }  # fmt: skip
    saved = client_in.post(f"/targets/{stored_target.pk}/edit", edit)
    assert saved.status_code == 302, saved.content.decode()[:2000]

    shown = client_in.get(url).content.decode()
    assert "needs the target's cores and disks" not in shown
    assert "8 cores x 2 + 2 disks" in shown
    # A change of anything else keeps them.
    client_in.post(f"/targets/{stored_target.pk}/edit", {**edit, "name": "db-renamed"})
    assert keys(batch) == ["baseline=0"]


def test_the_api_sends_a_held_answer_as_first_sent_and_each_host_its_own_links(
    make_batch, user: User
):
    batch = make_batch(threads=(1, 2), repeats=3, samples=5)
    token = tokens.token_create(user=user, name="tests", expires_in=None)[1]
    auth = {"Authorization": f"Token {token}"}
    url = f"/api/v1/batches/{batch.pk}/results"

    first = Client(HTTP_HOST="127.0.0.1").get(url, headers=auth)
    again = Client(HTTP_HOST="127.0.0.1").get(url, headers=auth)
    other_host = Client(HTTP_HOST="localhost").get(url, headers=auth)
    browsed = Client(HTTP_HOST="127.0.0.1").get(url, headers={**auth, "Accept": "text/html"})

    assert first.status_code == again.status_code == other_host.status_code == 200
    assert again.content == first.content and again["ETag"] == first["ETag"]
    for header in ("Content-Type", "Vary", "Allow"):
        assert again[header] == first[header], header
    assert first.json()["runs"][0]["url"].startswith("http://127.0.0.1/runs/")
    assert other_host.json()["runs"][0]["url"].startswith("http://localhost/runs/")
    assert other_host["ETag"] != first["ETag"]
    assert browsed.status_code == 200 and browsed["Content-Type"].startswith("text/html")


def test_an_answers_json_text_has_no_nan_nor_infinity_for_postgresql():
    # A ratio to nothing is NaN or infinite: JSON has neither, PostgreSQL refuses them.
    text = stored_results._json_text(
        {"ratio": float("nan"), "high": [float("inf"), -float("inf"), 1.5], "label": "NaN x"}
    )
    plain = stored_results._json_text({"ratio": 2.5, "label": "flush=1"})
    wide = stored_results._json_text({"rows": 2**70, "ratio": float("nan")})  # beyond orjson

    assert json.loads(text) == {"ratio": None, "high": [None, None, 1.5], "label": "NaN x"}
    assert plain == '{"ratio":2.5,"label":"flush=1"}'
    assert json.loads(wide) == {"rows": 2**70, "ratio": None}


def test_the_stored_version_reads_every_source_an_answer_is_made_from():
    # a source moved without this list (or its ROOT) following it fails every batch's end
    missing = [s for s in stored_results.SOURCES if not (stored_results.ROOT / s).exists()]
    assert missing == []
    assert (stored_results.ROOT / "manage.py").exists()
    assert len(stored_results.stored_version()) == 16


def test_the_header_read_finds_what_with_stored_finds(make_batch):
    # stored_header.py writes with_stored's freshness out in SQL: the two must agree.
    batch = make_batch(threads=(1, 2), repeats=1, samples=10)
    held.forget_all()

    def both(part: str = "html", baseline: Any = None) -> list[tuple[Any, Any]]:
        header = stored_header.header_with_stored(batch.pk, baseline=baseline, part=part)
        found = stored_results.with_stored(
            Batch.objects.filter(pk=batch.pk), baseline=baseline, part=part
        ).get()
        assert header is not None
        return [(b.__dict__["cached_etag"], b.__dict__[f"cached_{part}"]) for b in (header, found)]

    assert both() == [(None, None)] * 2  # nothing stored yet
    stored_results.batch_results_store(batch=batch)
    fresh, _ = both()
    assert both() == [fresh] * 2 and fresh[0] and fresh[1]
    assert both("results", baseline=1) == [(None, None)] * 2  # another view: not stored
    held.keep(fresh[0], "html", "held", 4)  # held by the process: its text not sent
    assert both() == [(fresh[0], None)] * 2
    # the batch ended again after its answer was stored: stale
    Batch.objects.filter(pk=batch.pk).update(finished_at=timezone.now() + timedelta(seconds=5))
    assert both() == [(None, None)] * 2
    # made by other code: stale too
    Batch.objects.filter(pk=batch.pk).update(finished_at=timezone.now() - timedelta(hours=1))
    assert both()[0][0] == fresh[0]
    StoredResults.objects.filter(batch=batch).update(etag="0123456789abcdef-old")
    assert both() == [(None, None)] * 2
    assert stored_header.header_with_stored(batch.pk + 1000, baseline=None, part="html") is None
    held.forget_all()
