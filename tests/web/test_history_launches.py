"""A plan's history holds every launch (issue 37): its scheduled nights and the batches
launched by hand from the page, the API or the command, filtered by how launched; a batch
that failed is marked as failed on the chart, never drawn as a measured night; the plan's
annotations are marked on the chart at their nights. Stored nights, as a worker leaves
them (tests/services/nightly/test_nights.py)."""

from __future__ import annotations

import json
from datetime import timedelta

from runs.models import Annotation, Batch, LaunchedBy, Status
from tests.services.nightly.test_nights import START, client_in, night, plan  # noqa: F401


def launched(plan, day, how, status=Status.DONE):  # noqa: F811
    batch = night(plan, day, status=status)
    Batch.objects.filter(pk=batch.pk).update(launched_by=how)
    return batch


def chart_of(html: str) -> dict:
    start = html.index('<script id="history-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start : html.index("</script>", start)])


def test_a_plan_launched_by_hand_has_a_history(plan, client_in):  # noqa: F811
    # issue 37: a plan launched three times showed "No scheduled batch of this plan has
    # measured anything yet."
    by_hand = [launched(plan, 0, LaunchedBy.UI), launched(plan, 1, LaunchedBy.API),
               launched(plan, 2, LaunchedBy.CLI)]  # fmt: skip

    html = client_in.get(f"/plans/{plan.pk}/history").content.decode()

    assert "has measured anything yet" not in html
    assert [n["batch"] for n in chart_of(html)["nights"]] == [b.pk for b in by_hand]
    assert [n["launched_by"] for n in chart_of(html)["nights"]] == ["ui", "api", "cli"]
    assert '<td class="launched">api</td>' in html


def test_the_history_is_filtered_by_how_batches_were_launched(plan, client_in):  # noqa: F811
    scheduled = [night(plan, day) for day in (0, 2)]
    ui = launched(plan, 1, LaunchedBy.UI)
    api = launched(plan, 3, LaunchedBy.API)
    page = f"/plans/{plan.pk}/history"

    def shown(query: str) -> list[int]:
        html = client_in.get(page + query).content.decode()
        return [n["batch"] for n in chart_of(html)["nights"]]

    assert shown("") == [scheduled[0].pk, ui.pk, scheduled[1].pk, api.pk]
    assert shown("?launched=schedule") == [b.pk for b in scheduled]
    assert shown("?launched=hand") == [ui.pk, api.pk]
    assert shown("?launched=api") == [api.pk]
    assert client_in.get(page + "?launched=nonsense").status_code == 404
    # issue 56: the API answers what the page shows, every launch, unless asked.
    api_rows = client_in.get(f"/api/v1/plans/{plan.pk}/history").json()["nights"]
    assert [(n["batch"], n["launched_by"]) for n in api_rows] == [
        (api.pk, "api"), (scheduled[1].pk, "schedule"),
        (ui.pk, "ui"), (scheduled[0].pk, "schedule"),
    ]  # fmt: skip
    asked = client_in.get(f"/api/v1/plans/{plan.pk}/history?launched=schedule").json()
    assert [n["batch"] for n in asked["nights"]] == [scheduled[1].pk, scheduled[0].pk]


def test_a_failed_night_is_marked_failed_and_annotations_at_their_nights(plan, client_in):  # noqa: F811
    # issue 37: a failed night was drawn on the chart as a night with what it half
    # measured, and annotations were listed under the chart but not marked on it.
    nights = [night(plan, day) for day in range(4)]
    failed = night(plan, 4, tps=10.0, status=Status.FAILED)
    Batch.objects.filter(pk=failed.pk).update(error="sysbench exited with code 1\nmore")
    after = night(plan, 5)
    Annotation.objects.create(
        plan=plan, at=START + timedelta(days=2, hours=-1), text="upgraded to 10.11.9"
    )
    Annotation.objects.create(plan=plan, at=START - timedelta(days=30), text="before the page")

    data = chart_of(client_in.get(f"/plans/{plan.pk}/history").content.decode())

    assert [n["failed"] for n in data["nights"]] == [False] * 4 + [True, False]
    assert data["nights"][4]["error"] == "sysbench exited with code 1"
    for cell in data["cells"]:
        assert cell["throughput"][4] is None and cell["latency"][4] is None
        assert cell["throughput"][5] is not None
    # at the first night after it; the one before the nights shown is not on this page
    assert [(a["index"], a["text"]) for a in data["annotations"]] == [(2, "upgraded to 10.11.9")]
    assert len(nights) + 2 == len(data["nights"]) and after.pk == data["nights"][5]["batch"]
