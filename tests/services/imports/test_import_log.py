"""`manage.py import_log`: real published and captured sysbench logs into imported runs."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.analysis.noise import stats
from runs.errors import InvalidInput
from runs.models import Batch, Run, Sample, Status, StoredResults, Target
from runs.services.imports.importer import log_import

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sysbench"

pytestmark = pytest.mark.django_db


@pytest.fixture
def target() -> Target:
    return Target.objects.create(
        name="old-lab", engine="mysql", host="db1.example", port=3306, user="sb", password="x"
    )


def import_log(*args: str) -> str:
    out = io.StringIO()
    call_command("import_log", *args, stdout=out)
    return out.getvalue()


def dry_run(name: str, *extra: str) -> dict:
    return json.loads(
        import_log(
            str(FIXTURES / f"{name}.txt"), "--target", "old-lab", "--dry-run", "--json", *extra
        )
    )


def test_a_dry_run_of_a_05_log_prints_its_samples_and_figures_and_saves_nothing(target):
    parsed = dry_run("legacy_05_oltp_rw")

    assert parsed["dry_run"] is True and parsed["batch_id"] is None
    assert parsed["status"] == "done"
    assert parsed["params"]["version"] == "0.5"
    assert parsed["params"]["threads"] == [8]
    assert parsed["params"]["report_interval"] == 2
    assert parsed["params"]["percentile"] == 95.0
    assert parsed["sample_count"] == 45 and len(parsed["first_samples"]) == 30
    first = parsed["first_samples"][0]
    assert (first["time_s"], first["tps"], first["reads"], first["latency_ms"]) == (
        2.0,
        1041.17,
        14630.86,
        11.58,
    )
    summary = parsed["summary"]
    assert summary["tps"] == 1037.40
    assert summary["transactions"] == 94409
    assert summary["queries"] == 2643452 + 188818
    assert summary["latency_pct_ms"] == 11.49
    assert summary["interval_tps"]["n"] == 45
    assert Batch.objects.count() == Run.objects.count() == 0


def test_a_dry_run_of_a_04_log_has_its_report_and_no_samples(target):
    parsed = dry_run("legacy_04_oltp_ro")

    assert parsed["params"]["version"] == "0.4.12"
    assert parsed["params"]["threads"] == [2]
    assert parsed["test"] == "oltp"
    assert parsed["sample_count"] == 0 and parsed["first_samples"] == []
    summary = parsed["summary"]
    assert summary["transactions"] == 457603
    assert summary["tps"] == 7626.68
    assert summary["latency_avg_ms"] == 0.26
    assert summary["latency_pct_ms"] == 0.32
    assert summary["total_time_s"] == 60.0003


def test_a_dry_run_of_a_cpu_log_names_the_test_and_its_events_per_second(target):
    parsed = dry_run("cpu")

    assert parsed["test"] == "cpu"
    assert [(s["eps"], s["latency_ms"]) for s in parsed["first_samples"]] == [
        (39917.39, 0.04),
        (20129.88, 0.05),
    ]
    assert parsed["summary"]["eps"] == 30063.84
    assert parsed["summary"]["events"] == 60379


def test_a_dry_run_of_a_fileio_log_gives_its_throughput(target):
    parsed = dry_run("fileio")

    assert parsed["test"] == "fileio"
    assert parsed["first_samples"][0]["extra"] == {
        "read_mib_per_s": 547.37,
        "written_mib_per_s": 364.91,
        "fsyncs_per_s": 2331.46,
    }
    summary = parsed["summary"]
    assert summary["file_reads_per_s"] == 36142.54
    assert summary["read_mib_per_s"] == 564.73
    assert summary["written_mib_per_s"] == 376.48
    assert summary["file_fsyncs_per_s"] == 2413.46


def test_the_command_line_of_a_pasted_log_gives_its_parameters_without_the_password(target):
    parsed = dry_run("legacy_04_oltp_mixed_cmdline", "--test", "oltp_legacy")

    assert parsed["test"] == "oltp_legacy"
    assert parsed["params"]["options"]["table-size"] == "1000000"
    assert parsed["params"]["options"]["time"] == "60"
    assert "sbtest --max-time" not in parsed["params"]["command"]
    assert "--mysql-password=***" in parsed["params"]["command"]


def test_an_import_stores_the_run_with_its_summary_samples_and_raw_log(target, admin_user):
    output = import_log(
        str(FIXTURES / "legacy_05_oltp_rw.txt"), "--target", "old-lab", "--label", "2017 lab"
    )

    batch = Batch.objects.get()
    assert f"batch {batch.pk}" in output
    assert batch.plan is None
    assert batch.launched_by == "import"
    assert batch.label == "2017 lab"
    assert batch.target == target
    assert batch.status == Status.DONE
    assert batch.params["version"] == "0.5"
    run = batch.runs.get()
    assert run.status == Status.DONE
    assert run.threads == 8
    assert run.summary["tps"] == 1037.40
    assert run.samples.count() == 45
    assert run.samples.order_by("seq")[0].tps == 1041.17
    assert run.reports[0]["sql"]["transactions"] == 94409
    assert "OLTP test statistics:" in run.raw_log


def test_an_import_ends_its_batch_with_its_answer_stored(target):
    with (FIXTURES / "legacy_05_oltp_rw.txt").open("rb") as log:
        imported = log_import(log=log, target=target)

    assert imported.batch is not None
    stored = StoredResults.objects.get(batch=imported.batch)
    assert stored.key == "baseline=0"
    assert stored.content["results"]["unit"] == "tps"
    assert stored.content["results"]["table"][0]["point"]["median"] == 1037.40


def test_the_raw_log_keeps_no_password(target):
    text = (FIXTURES / "legacy_04_oltp_mixed_cmdline.txt").read_text()
    imported = log_import(log=io.BytesIO(text.encode()), target=target, test=None, label="")

    assert imported.run is not None
    assert "--mysql-password=***" in imported.run.raw_log
    assert "password=sbtest" not in imported.run.raw_log
    assert imported.run.summary["transactions"] == 65455


def test_a_log_with_only_errors_imports_as_a_failed_run_with_its_error(target):
    text = (FIXTURES / "err_access_denied.txt").read_text()
    imported = log_import(
        log=io.BytesIO(text.encode()), target=target, test="oltp_read_write", label="denied"
    )

    run = imported.run
    assert run is not None and imported.batch is not None
    assert imported.batch.status == run.status == Status.FAILED
    assert "1045" in run.error and "Access denied" in run.error
    assert run.error_kind == "access_denied"
    assert "credentials" in run.error_hint


def test_garbage_lines_are_kept_and_counted_never_fatal(target):
    clean = (FIXTURES / "oltp_read_write.txt").read_bytes()
    garbage = b"\x00\xff\xfe binary splinter\n[ 9s ] thds: two\nrandom words\n"
    data = garbage + clean + garbage
    imported = log_import(log=io.BytesIO(data), target=target, test=None, label="")

    assert imported.unrecognised_lines == 6
    assert imported.summary["unrecognised_lines"] == 6
    assert imported.run is not None
    assert imported.run.status == Status.DONE
    assert imported.run.summary["transactions"] == 1688
    assert "binary splinter" in imported.run.raw_log
    assert "\x00" not in imported.run.raw_log


def test_garbage_from_a_file_through_the_command(target, tmp_path):
    path = tmp_path / "junk.log"
    path.write_bytes(b"\x00\x01\x02\nnot sysbench at all\n\xff\xfe\n")

    output = import_log(str(path), "--target", "old-lab")

    run = Run.objects.get()
    assert run.status == Status.FAILED
    assert "no complete sysbench report" in run.error
    assert run.summary["unrecognised_lines"] == 3
    assert "failed" in output


def test_an_unknown_target_is_named(target):
    with pytest.raises(CommandError, match="no target named 'nowhere'"):
        import_log(str(FIXTURES / "cpu.txt"), "--target", "nowhere")


def test_an_empty_log_is_refused(target, tmp_path):
    path = tmp_path / "empty.log"
    path.write_text("\n\n")
    with pytest.raises(CommandError, match="empty"):
        import_log(str(path), "--target", "old-lab")


# ---- long logs: read line by line, stored in bulk, refused halfway without a trace ------

SQL_LINE = (
    "[ {t}s ] thds: 4 tps: {tps:.2f} qps: {qps:.2f} (r/w/o: 1.00/2.00/3.00) "
    "lat (ms,95%): 2.50 err/s: 0.00 reconn/s: 0.00\n"
)


def long_log(lines: int) -> bytes:
    header = (
        "sysbench 1.0.20\n\nNumber of threads: 4\nReport intermediate results every 1 second(s)\n"
    )
    body = "".join(
        SQL_LINE.format(t=t, tps=100 + t % 17, qps=2000 + t % 13) for t in range(1, lines + 1)
    )
    return (header + body).encode()


def test_a_long_log_is_stored_in_bulk_with_the_spread_of_its_samples(target):
    with CaptureQueriesContext(connection) as queries:
        imported = log_import(log=io.BytesIO(long_log(20_000)), target=target)

    run = imported.run
    assert run is not None and imported.sample_count == 20_000 == run.samples.count()
    assert len(queries) < 40  # samples go with COPY, the raw log in pieces of 5000 lines
    spread = stats.describe([100 + t % 17 for t in range(1, 20_001)])
    stored = imported.summary["interval_tps"]
    assert stored["n"] == spread.n and stored["median"] == spread.median
    for figure in ("mean", "stddev", "cv", "min", "max"):
        assert stored[figure] == pytest.approx(getattr(spread, figure), rel=1e-9)
    last = run.samples.order_by("-seq")[0]
    assert (last.seq, last.time_s, last.threads, last.qps) == (
        20_000,
        20_000.0,
        4,
        2000 + 20_000 % 13,
    )
    assert run.raw_log.count("\n") == 20_000 + 4 and run.raw_log.endswith("reconn/s: 0.00\n")


def test_a_log_larger_than_the_limit_is_refused_and_leaves_nothing(target, settings):
    settings.BENCHDASH_MAX_LOG_MB = 1

    with pytest.raises(InvalidInput, match="larger than 1 MB"):
        log_import(log=io.BytesIO(long_log(20_000)), target=target)

    assert not Batch.objects.exists() and not Sample.objects.exists()


def test_a_dry_run_stores_nothing_and_gives_a_chart_of_the_whole_log(target):
    imported = log_import(log=io.BytesIO(long_log(5_000)), target=target, dry_run=True)

    assert imported.batch is None and imported.run is None
    assert not Batch.objects.exists() and not Sample.objects.exists()
    assert imported.sample_count == 5_000 and len(imported.first_samples) == 30
    tps = imported.preview["tps"]
    bucket = 5_000 / 120
    assert 0 < len(tps) <= 240 and tps[0][0] <= bucket and tps[-1][0] >= 5_000 - bucket


def test_the_queue_line_of_a_rate_limited_run_joins_its_sample(target):
    with (FIXTURES / "oltp_rate.txt").open("rb") as log:
        imported = log_import(log=log, target=target)

    assert imported.run is not None
    rows = list(
        imported.run.samples.order_by("seq").values_list("time_s", "queue_length", "concurrency")
    )
    assert rows[:2] == [(1.0, 0, 0), (2.0, 0, 0)] and len(rows) == imported.sample_count


def test_a_figure_that_overflows_is_kept_raw_and_counted(target):
    text = (FIXTURES / "oltp_read_write.txt").read_text().replace("tps: 517.39", "tps: 1e999")

    imported = log_import(log=io.BytesIO(text.encode()), target=target)

    assert imported.unrecognised_lines == 1 and imported.sample_count == 2
    assert imported.run is not None and "tps: 1e999" in imported.run.raw_log
    json.dumps(imported.to_dict(), allow_nan=False)


def test_a_log_of_a_custom_script_with_a_report_hook_is_imported_with_its_csv_samples(target):
    """A log of a bundle run (the TPC-C-shaped test bundle, --report_csv=yes): its report
    hook printed sysbench.report_csv lines instead of interval lines."""
    parsed = dry_run("tpcc_like_report_csv")

    assert parsed["status"] == "done"
    assert parsed["test"] == "tpcc_like"
    assert parsed["params"]["threads"] == [2]
    assert parsed["params"]["options"]["scale"] == "2"
    assert parsed["params"]["options"]["report-csv"] == "yes"
    assert parsed["sample_count"] == 4
    first = parsed["first_samples"][0]
    assert (first["time_s"], first["threads"], first["tps"], first["qps"]) == (
        1.0,
        2,
        901.33,
        3613.3,
    )
    assert (first["writes"], first["other"], first["latency_ms"]) == (1806.65, 1806.65, 6.91)
    assert parsed["summary"]["transactions"] == 2945
    assert parsed["unrecognised_lines"] == 0


@pytest.mark.parametrize(
    "name",
    ["hook_report_default", "hook_report_csv", "hook_report_json"],
)
def test_a_log_of_a_script_reporting_through_a_lua_hook_is_imported_with_its_samples(target, name):
    """Logs of sysbench 1.0.20 running a script with --percentile=99 whose
    report_intermediate hook is Lua's report_default (`err/s` without the colon; the line
    says its percentile), report_csv or report_json (they do not: the final report, read
    after them, says it)."""
    text = (FIXTURES / f"{name}.txt").read_text()
    intervals = len(re.findall(r'^(?:\[ \d+s \] thds|\d+,\d+,|    "time":)', text, re.M))
    assert intervals >= 2

    parsed = dry_run(name)

    assert parsed["status"] == "done" and parsed["unrecognised_lines"] == 0
    assert parsed["sample_count"] == intervals
    assert {s["latency_pct"] for s in parsed["first_samples"]} == {99.0}
    assert parsed["params"]["percentile"] == 99.0
    assert all(s["tps"] > 0 for s in parsed["first_samples"])


@pytest.mark.parametrize(
    "name", ["final_hook_report_default", "final_hook_report_csv", "final_hook_report_json"]
)
def test_a_log_whose_final_report_a_lua_hook_printed_imports_it_as_its_summary(target, name):
    """Logs of sysbench 1.0.20 running tests/fixtures/lua/report_final_hook.lua: both its
    reports through Lua, so sysbench printed no final report of its own; its last line
    (`thds: 0`) is the run's summary, the lines before it its samples."""
    text = (FIXTURES / f"{name}.txt").read_text()
    lines = re.findall(r'^(?:\[ \d+s \] thds: (\d+)|\d+,(\d+),|    "threads": (\d+))', text, re.M)
    *intervals, last = ["".join(groups) for groups in lines]
    assert last == "0" and "SQL statistics:" not in text

    parsed = dry_run(name)

    assert parsed["status"] == "done" and parsed["unrecognised_lines"] == 0
    assert parsed["sample_count"] == len(intervals)
    summary = parsed["summary"]
    assert summary["final_report"] == "lua" and summary["transactions"] > 0
    assert summary["total_time_s"] == 3.0
