"""The history page of a scheduled plan reads a bounded number of queries, whatever the
number of nights and cells.

Its 8 nights x 12 cells are real: 8 scheduled batches of a 12-cell cpu plan, run by
sysbench on a real worker. Each run counts a few events (--events, no --time), but each
cell first waits for its machines' first second of host metrics, so a night takes some
15 s. The same bound at 8 and at 80 nights, and at 366 nights shown, is asserted on stored
nights in tests/services/nightly/test_nights.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.test import Client
from playwright.sync_api import sync_playwright

from runs.models import Annotation, Batch, LaunchedBy, Plan, Status
from runs.services import batches
from tests.api.test_history import stored_night
from tests.helpers import wait_for_batch, wait_until
from tests.services.nightly.test_history import CHROMIUM_ARGS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# Real nights of 12 cells, each cell about a second (its host metrics' first second): 4
# nights take a minute. That the page's queries do not grow with the nights is asserted
# at 8 and 80 stored nights in tests/services/nightly/test_nights.py.
NIGHTS = 4


def page_data(html: str) -> dict:
    start = html.index('<script id="history-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start : html.index("</script>", start)])


def test_the_history_of_real_nights_of_12_cells_reads_a_bounded_number_of_queries(
    celery_worker, local_host, django_user_model, django_assert_max_num_queries
):
    plan = Plan.objects.create(
        name="nightly cpu",
        target=None,
        load_host=local_host,
        test="cpu",
        options={"time": 0, "events": 20, "report-interval": 0},
        threads=[1, 2, 3, 4],
        option_axes={"cpu-max-prime": [500, 1000, 2000]},
        # The page's queries are measured here, not the alerts: on this shared machine the
        # load steps the figures, and every alert would re-run its cells (alerts.py).
        regression_threshold_pct=1000,
    )
    nights = []
    for _ in range(NIGHTS):
        batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by=LaunchedBy.SCHEDULE))
        assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
        nights.append(batch)
    last = nights[-1]

    def checked() -> bool:
        last.refresh_from_db()
        return bool(last.analysis)

    wait_until(checked, timeout=60, what="the check of the last night")
    client = Client()
    client.force_login(django_user_model.objects.create_user("dba", password="dba-pass-123"))

    # 6, and 2 for the plan's alerts and its annotations (runs/services/nightly/alerts.py).
    with django_assert_max_num_queries(8):
        response = client.get(f"/plans/{plan.pk}/history?nights={NIGHTS}")

    assert response.status_code == 200
    html = response.content.decode()
    data = page_data(html)
    assert [n["batch"] for n in data["nights"]] == [b.pk for b in nights]
    assert data["unit"] == "events/s" and data["latency"] == "p95"
    assert len(data["cells"]) == 12
    assert data["cells"][0]["label"] == "threads=1 cpu-max-prime=500"
    for cell in data["cells"]:
        assert len(cell["throughput"]) == NIGHTS
        assert all(v is not None and v > 0 for v in cell["throughput"])
    assert html.count('<canvas data-cell="') == 12
    assert html.count(f'<a href="/batches/{last.pk}/">') == 1
    assert last.analysis["summary"] in html  # the latest verdict, whatever this machine made of it


def test_a_step_is_drawn_as_a_triangle_at_its_night_without_a_script_error(
    local_host, asgi_server, session_cookie, monkeypatch
):
    plan = Plan.objects.create(
        name="nightly inserts", load_host=local_host, test="oltp_insert", threads=[1]
    )
    rng = np.random.default_rng(28)
    for n in range(30):
        level = 1000.0 if n < 20 else 900.0
        stored_night(plan, n, level * (1 + 0.015 * rng.standard_normal()))
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop, this thread
    errors: list[str] = []

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = chromium.new_context(viewport={"width": 1400, "height": 900})
        context.add_cookies(
            [{"name": "sessionid", "value": session_cookie["sessionid"], "url": asgi_server.url}]
        )
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{asgi_server.url}/plans/{plan.pk}/history?nights=30")
        page.wait_for_load_state("networkidle")
        styles = page.evaluate(
            """async () => (await import("chart.js")).Chart
                   .getChart(document.querySelector('#history-charts canvas'))
                   .getDatasetMeta(0).data.map((point) => point.options.pointStyle)"""
        )
        listed = page.inner_text("ul.steps")
        context.close()
        chromium.close()

    assert errors == []
    assert [i for i, style in enumerate(styles) if style == "triangle"] == [20]
    assert "tps stepped slower: " in listed


def test_a_failed_night_and_an_annotation_are_marked_on_the_chart(
    local_host, asgi_server, session_cookie, monkeypatch
):
    # issue 37: a failed night was drawn as a night, and annotations were not on the chart.
    plan = Plan.objects.create(
        name="nightly inserts", load_host=local_host, test="oltp_insert", threads=[1]
    )
    made = [stored_night(plan, n, 1000.0 + n) for n in range(6)]
    Batch.objects.filter(pk=made[3].pk).update(status=Status.FAILED, error="server went away")
    Annotation.objects.create(plan=plan, at=made[2].created_at, text="upgraded to 10.11.9")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop, this thread
    errors: list[str] = []

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = chromium.new_context(viewport={"width": 1400, "height": 900})
        context.add_cookies(
            [{"name": "sessionid", "value": session_cookie["sessionid"], "url": asgi_server.url}]
        )
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{asgi_server.url}/plans/{plan.pk}/history")
        page.wait_for_load_state("networkidle")
        drawn = page.evaluate(
            """async () => {
                const chart = (await import("chart.js")).Chart
                    .getChart(document.querySelector('#history-charts canvas'));
                return {
                    sets: chart.data.datasets.map((d) => [d.label, d.data]),
                    plugins: chart.config.plugins.map((p) => p.id),
                };
            }"""
        )
        context.close()
        chromium.close()

    assert errors == []
    sets = dict(drawn["sets"])
    assert sets["tps"][3] is None and sets["tps"][4] is not None
    assert sets["failed batch"] == [None, None, None, 0, None, None]
    assert drawn["plugins"] == ["historyAnnotations"]
