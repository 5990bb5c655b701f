"""The servers table of a real two-target batch (issue 47): a plan over two private MariaDB
servers, run by a real worker; GET /api/v1/batches/{id}/relative, its CSV and the results
page compare the second server with the first in one row: a ratio with its interval and
verdict in the second server's column, not one row per server with nothing to compare."""

from __future__ import annotations

import csv
import io
import re

import pytest

from runs.analysis.noise import verdicts
from runs.models import PlanServer, Status
from runs.services import batches
from tests.execution.test_targets_axis import second_db, second_target  # noqa: F401 - fixtures
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

OPTIONS = {"time": 1, "report-interval": 1, "tables": 1, "table-size": 100}
VERDICTS = {verdicts.FASTER, verdicts.SLOWER, verdicts.SAME}


def two_target_batch(make_plan, second_target):  # noqa: F811
    """Two servers, nothing else varying: 1 thread, 3 repeats (the fewest an interval takes)."""
    plan = make_plan(options=OPTIONS, threads=[1], repeats=3)
    PlanServer.objects.create(plan=plan, target=second_target, position=1)
    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("status", "error")))
    return batch


def test_a_two_target_batchs_servers_table_compares_the_second_with_the_first(
    api,
    owner,
    celery_worker,
    make_plan,
    target,
    second_target,  # noqa: F811
):
    batch = two_target_batch(make_plan, second_target)
    first, second = target.name, second_target.name

    table = api.get(f"/api/v1/batches/{batch.pk}/relative").json()

    assert table["axis"] == "server" and table["axes"] == ["server"]
    assert table["columns"] == [first, second] and table["baseline"] == first
    (family,) = table["families"]
    (row,) = family["rows"]  # one row holding both servers
    assert row["label"] == "all runs"
    base, other = row["cells"]
    assert (base["column"], base["n"], base["verdict"]) == (first, 3, None)
    assert base["throughput"] > 0
    assert (other["column"], other["n"]) == (second, 3) and other["throughput"] > 0
    verdict = other["verdict"]
    assert verdict is not None and verdict["verdict"] in VERDICTS
    assert verdict["ratio_low"] < verdict["ratio"] < verdict["ratio_high"]
    assert verdict["interval"] and verdict["correction"] == "Holm's correction over 1 cell"
    (move,) = family["moves"]
    assert move["column"] == second and move["tested"] == 1
    assert move["ratio"] == pytest.approx(verdict["ratio"])
    assert "nothing to compare" not in move["text"] and "nothing to compare" not in table["summary"]

    # The CSV: a line per server, the second's with its ratio and interval.
    answer = api.get(f"/api/v1/batches/{batch.pk}/relative?format=csv")
    lines = list(csv.DictReader(io.StringIO(answer.text)))
    assert [(x["row"], x["column"], x["verdict"]) for x in lines] == [
        ("all runs", first, "baseline"),
        ("all runs", second, verdict["text"]),
    ]
    assert float(lines[1]["ratio_low"]) < float(lines[1]["ratio"]) < float(lines[1]["ratio_high"])

    # The results page: the second server's column holds the ratio, interval and verdict.
    api.login("owner", "owner-pass-1")
    page = api.get(f"/batches/{batch.pk}/results")
    assert page.status_code == 200
    section = page.text[page.text.index('<section id="relative">') :]
    section = section[: section.index("</section>")]
    assert f"<h2>Relative to {first}</h2>" in section
    assert "(also:" not in section  # no second "target" axis beside the servers
    (tr,) = re.findall(r"<tbody>.*?</tbody>", section, re.S)
    assert tr.count("<tr") == 1 and "all runs" in tr
    assert f"{verdict['interval']} · {verdict['text']}</small>" in tr
