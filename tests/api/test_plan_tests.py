"""A plan's tests axis through the API: stored in order with its first item as the plan's
test, refused naming the item at fault, the built-in suite to start from; and a batch's
relative table as JSON and CSV."""

from __future__ import annotations

import csv
import io
from statistics import geometric_mean

import pytest

from runs.models import Batch, Plan, Run, Status
from runs.sysbench.suites import microbenchmarks
from tests.api.test_plans import plan_fields  # noqa: F401  (a fixture)


def test_a_tests_axis_is_stored_and_its_first_test_is_the_plans(api, plan_fields):  # noqa: F811
    suite = microbenchmarks()[:3]
    created = api.post("/api/v1/plans", json={**plan_fields, "tests": suite})
    assert created.status_code == 201, created.text
    plan = Plan.objects.get(pk=created.json()["id"])
    assert plan.tests == suite
    assert plan.test == "oltp_point_select"
    assert created.json()["tests"] == suite


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ({"test": "cpu", "options": {}}, "database tests only"),
        ({"test": "oltp_point_select", "options": {"range-size": 5}}, "range-size"),
        ({"test": "oltp_insert", "options": {}, "rebuild": "yes"}, "rebuild is true or false"),
    ],
)
def test_a_bad_item_is_refused_naming_the_tests(api, plan_fields, item, words):  # noqa: F811
    first = {"test": "oltp_insert", "options": {}, "family": "write"}
    answer = api.post("/api/v1/plans", json={**plan_fields, "tests": [first, item]})
    assert answer.status_code == 400, answer.text
    assert words in answer.text
    assert not Plan.objects.exists()


def test_the_built_in_suite_is_there_to_start_from(api):
    answer = api.get("/api/v1/plans/suites")
    assert answer.status_code == 200
    assert answer.json()["microbenchmarks"] == microbenchmarks()


def test_the_relative_table_as_json_and_csv(api, plan_fields, offline_target, local_host):  # noqa: F811
    batch = Batch.objects.create(
        target=offline_target, load_host=local_host, status=Status.DONE, seed=1,
        params={"test": "oltp_insert", "server_settings": {"sync_binlog": ["1", "0"]}},
    )  # fmt: skip
    tps = {"1": (100.0, 104.0, 98.0), "0": (150.0, 160.0, 155.0)}
    for value, figures in tps.items():
        for i, figure in enumerate(figures):
            Run.objects.create(
                batch=batch, position=len(tps) * i + int(value), round=i, threads=1,
                cell_key=f'{{"options":{{}},"settings":{{"sync_binlog":"{value}"}},"threads":1}}',
                settings={"sync_binlog": value}, status=Status.DONE, summary={"tps": figure},
            )  # fmt: skip

    table = api.get(f"/api/v1/batches/{batch.pk}/relative").json()
    assert table["columns"] == ["sync_binlog=1", "sync_binlog=0"]
    (cell_base, cell_other) = table["families"][0]["rows"][0]["cells"]
    # a cell's figure is the geometric mean of its repeats, the one estimator (issue 49)
    assert cell_base["throughput"] == pytest.approx(geometric_mean(tps["1"]))
    assert cell_base["verdict"] is None
    assert cell_other["verdict"]["verdict"] == "faster"
    assert "Against sync_binlog=1: cells" in table["summary"]

    answer = api.get(f"/api/v1/batches/{batch.pk}/relative?format=csv")
    rows = list(csv.reader(io.StringIO(answer.text)))
    assert rows[0][:3] == ["family", "row", "column"]
    assert [r[2] for r in rows[1:]] == ["sync_binlog=1", "sync_binlog=0"]


def test_an_axis_the_batch_does_not_vary_is_refused_naming_those_it_does(
    api, offline_target, local_host
):
    """Issue 48: ?axis=server on a batch whose servers do not vary answered the first
    axis's table as if asked for it; now a 400 naming the axis and the batch's axes, in the
    API (JSON and CSV) and the results page's CSV."""
    batch = Batch.objects.create(
        target=offline_target, load_host=local_host, status=Status.DONE, seed=1,
        params={"test": "oltp_insert", "server_settings": {"sync_binlog": ["1", "0"]}},
    )  # fmt: skip
    for position, (value, threads) in enumerate([("1", 1), ("0", 1), ("1", 2), ("0", 2)]):
        Run.objects.create(
            batch=batch, position=position, round=0, threads=threads,
            cell_key=f'{{"options":{{}},"settings":{{"sync_binlog":"{value}"}},"threads":{threads}}}',
            settings={"sync_binlog": value}, status=Status.DONE, summary={"tps": 100.0},
        )  # fmt: skip
    url = f"/api/v1/batches/{batch.pk}/relative"
    for asked in ("server", "range_size"):
        for answer in (api.get(f"{url}?axis={asked}"), api.get(f"{url}?axis={asked}&format=csv")):
            assert answer.status_code == 400, answer.text
            refused = answer.json()
            assert refused["field"] == "axis"
            assert asked in refused["message"] and "sync_binlog, threads" in refused["message"]
    assert api.get(f"{url}?axis=threads").json()["columns"] == ["threads=1", "threads=2"]
    assert api.get(f"{url}?axis=sync_binlog").json()["axis"] == "sync_binlog"

    api.login("owner", "owner-pass-1")
    page_csv = api.get(f"/batches/{batch.pk}/export.csv?what=relative&axis=server")
    assert page_csv.status_code == 400
    assert "server" in page_csv.text and "sync_binlog, threads" in page_csv.text


def test_the_relative_table_per_query_in_the_api_and_on_the_page(api, offline_target, local_host):
    """Issue 48: rQPS and the costs per query beside those per transaction, from each run's
    summary (qps, tps) and host summary, in the API and on the results page."""
    batch = Batch.objects.create(
        target=offline_target, load_host=local_host, status=Status.DONE, seed=1,
        params={"test": "oltp_read_only", "server_settings": {"sync_binlog": ["1", "0"]}},
    )  # fmt: skip
    tps = {"1": (100.0, 104.0, 98.0), "0": (150.0, 160.0, 155.0)}
    host = {"hosts": [{"role": "server", "host": "db", "read_kb_per_tx": 8.0,
                       "write_kb_per_tx": 16.0, "db": {"cpu_us_per_tx": 320.0,
                                                       "csw_per_tx": 32.0}}]}  # fmt: skip
    for value, figures in tps.items():
        for i, figure in enumerate(figures):
            Run.objects.create(
                batch=batch, position=len(tps) * i + int(value), round=i, threads=1,
                cell_key=f'{{"options":{{}},"settings":{{"sync_binlog":"{value}"}},"threads":1}}',
                settings={"sync_binlog": value}, status=Status.DONE, host_summary=host,
                summary={"tps": figure, "qps": figure * 16},  # 16 queries a transaction
            )  # fmt: skip

    table = api.get(f"/api/v1/batches/{batch.pk}/relative").json()
    base, other = table["families"][0]["rows"][0]["cells"]
    assert base["qps"] == pytest.approx(16 * geometric_mean(tps["1"])) and base["rqps"] is None
    assert other["rqps"] == pytest.approx(other["verdict"]["ratio"])
    disks = {"io_source": "machine's disks", "io_why": ""}  # runs without the server's own
    assert base["per_tx"] == {"cpu_us": 320.0, "csw": 32.0, "read_kb": 8.0, "write_kb": 16.0,
                              **disks}  # fmt: skip
    assert base["per_query"] == {"cpu_us": 20.0, "csw": 2.0, "read_kb": 0.5, "write_kb": 1.0,
                                 **disks}  # fmt: skip

    api.login("owner", "owner-pass-1")
    page = api.get(f"/batches/{batch.pk}/results").text
    section = page[page.index('<section id="relative">') :]
    section = section[: section.index("</section>")]
    assert 'id="relative-per-query"' in section and ">rQPS</th>" in section
    assert '<span class="per-tx">320.0</span><span class="per-query">20.00</span>' in section
    assert '<td class="num">1,610</td>' in section  # the baseline's qps: 16 times 100.6


def test_the_relative_tables_io_names_its_source_in_the_api_csv_and_page(
    api, offline_target, local_host
):
    """Issue 48: read and write KB from the database server's own processes
    (/proc/<pid>/io) where every repeat of a cell has them, not the machine's disks (which
    carry the neighbours' I/O); the source named in the JSON, the CSV and on the page."""
    batch = Batch.objects.create(
        target=offline_target, load_host=local_host, status=Status.DONE, seed=1,
        params={"test": "oltp_write_only", "server_settings": {"sync_binlog": ["1", "0"]}},
    )  # fmt: skip
    host = {"hosts": [{"role": "server", "host": "db", "read_kb_per_tx": 8.0,
                       "write_kb_per_tx": 160.0, "db": {"cpu_us_per_tx": 320.0,
                       "read_kb_per_tx": 0.5, "write_kb_per_tx": 12.0}}]}  # fmt: skip
    for value in ("1", "0"):
        for i in range(3):
            Run.objects.create(
                batch=batch, position=2 * i + int(value), round=i, threads=1,
                cell_key=f'{{"options":{{}},"settings":{{"sync_binlog":"{value}"}},"threads":1}}',
                settings={"sync_binlog": value}, status=Status.DONE, host_summary=host,
                summary={"tps": 100.0 + i, "qps": (100.0 + i) * 4},
            )  # fmt: skip

    table = api.get(f"/api/v1/batches/{batch.pk}/relative").json()
    assert table["io_source"] == "server process"
    base = table["families"][0]["rows"][0]["cells"][0]
    assert base["per_tx"]["write_kb"] == 12.0 and base["per_tx"]["io_source"] == "server process"
    assert base["per_query"]["write_kb"] == 3.0  # 4 queries a transaction
    rows = list(
        csv.reader(io.StringIO(api.get(f"/api/v1/batches/{batch.pk}/relative?format=csv").text))
    )
    assert rows[0][-1] == "io_source" and {r[-1] for r in rows[1:]} == {"server process"}

    api.login("owner", "owner-pass-1")
    page = api.get(f"/batches/{batch.pk}/results").text
    section = page[page.index('<section id="relative">') :]
    section = section[: section.index("</section>")]
    assert "server process I/O" in section and 'data-io="server process"' in section
    assert "the server machine&#x27;s disks" not in section
