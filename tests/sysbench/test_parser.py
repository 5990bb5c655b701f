"""The sysbench output parser, read against real captured outputs.

Fixtures in tests/fixtures/sysbench/: the 1.0.20 outputs were captured from the real
sysbench (stdout and stderr together, exit code in <name>.exit); the legacy_* ones
(0.5, 0.4) and fileio_11_* (a 1.1 build) are published logs, their source on the first
line, some with the shell prompt and command line they were pasted with.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runs.sysbench.parser import (
    Event,
    IntervalSample,
    OutputParser,
    ParseResult,
    QueueSample,
    SysbenchError,
    parse_text,
    read_command,
    redact_secrets,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sysbench"
ALL_FIXTURES = sorted(p.stem for p in FIXTURES.glob("*.txt"))


def text_of(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def exit_code_of(name: str) -> int | None:
    path = FIXTURES / f"{name}.exit"
    return int(path.read_text()) if path.exists() else None


def parse(name: str) -> ParseResult:
    return parse_text(text_of(name), exit_code_of(name))


def primary(name: str) -> SysbenchError:
    error = parse(name).primary_error
    assert error is not None
    return error


def events_by_line(name: str) -> list[tuple[str, list[Event]]]:
    parser = OutputParser()
    return [(line, parser.feed(line)) for line in text_of(name).splitlines(keepends=True)]


# ---- streaming ------------------------------------------------------------------


def test_each_interval_sample_comes_back_from_the_feed_of_its_own_line():
    fed = events_by_line("oltp_read_write")
    interval_lines = [(line, events) for line, events in fed if "thds:" in line]
    assert len(interval_lines) == 3
    for line, events in interval_lines:
        assert len(events) == 1
        sample = events[0]
        assert isinstance(sample, IntervalSample)
        assert line.startswith(f"[ {sample.time_s:.0f}s ]")
    assert all(events == [] for line, events in fed if "thds:" not in line)


def test_it_reads_lines_with_or_without_their_line_ending():
    lines = text_of("oltp_read_write").splitlines()
    results = []
    for ending in ("", "\n", "\r\n"):
        parser = OutputParser()
        for line in lines:
            parser.feed(line + ending)
        results.append(parser.finish(0).to_dict())
    assert results[0] == results[1] == results[2]
    assert results[0]["unrecognised_lines"] == 0


def test_queue_lines_of_rate_mode_come_back_as_queue_samples():
    fed = events_by_line("oltp_rate")
    queue_events = [events for line, events in fed if "queue length" in line]
    assert queue_events == [[QueueSample(float(t), 0, 0)] for t in (1, 2, 3)]
    result = parse("oltp_rate")
    assert [s.tps for s in result.samples] == [17.97, 20.01, 24.99]
    assert result.header["rate"] == 20
    assert len(result.queue_samples) == 3


def test_an_error_comes_back_when_the_next_line_arrives():
    parser = OutputParser()
    assert parser.feed("FATAL: error 2002: Can't connect to server on '127.0.0.1' (115)\n") == []
    events = parser.feed("FATAL: Thread initialization failed!\n")
    assert [e.code for e in events if isinstance(e, SysbenchError)] == [2002]
    assert [e.kind for e in parser.finish(1).errors] == ["connect", "thread_init"]


def test_an_error_repeated_by_every_thread_is_reported_once():
    lines = text_of("err_access_denied").splitlines()
    assert sum("error 1045" in line for line in lines) == 2
    parser = OutputParser()
    streamed = [e for line in lines for e in parser.feed(line) if isinstance(e, SysbenchError)]
    errors = parser.finish(1).errors
    assert errors[: len(streamed)] == streamed  # the last one comes with finish()
    assert [e.code for e in errors].count(1045) == 1


# ---- sysbench 1.0 SQL tests -----------------------------------------------------


def test_it_reads_the_version_and_the_header():
    result = parse("oltp_read_write")
    assert result.version == "1.0.20"
    assert result.header["threads"] == 2
    assert result.header["report_interval"] == 1
    assert result.header["percentile"] == 95.0
    assert result.header["build"] == "using system LuaJIT 2.1.0-beta3"


def test_it_reads_the_figures_of_an_sql_interval_line():
    # [ 1s ] thds: 2 tps: 575.80 qps: 11621.71 (r/w/o: 8152.96/2310.17/1158.58)
    #        lat (ms,95%): 5.67 err/s: 4.99 reconn/s: 0.00
    first = parse("oltp_read_write").samples[0]
    assert first == IntervalSample(
        time_s=1.0,
        threads=2,
        tps=575.80,
        qps=11621.71,
        reads=8152.96,
        writes=2310.17,
        other=1158.58,
        latency_pct=95.0,
        latency_ms=5.67,
        errors_per_s=4.99,
        reconnects_per_s=0.0,
    )


def test_it_reads_the_final_sql_report():
    result = parse("oltp_read_write")
    assert result.outcome == "ok"
    final = result.final
    assert final is not None
    assert final.sql == {
        "read": 23814,
        "write": 6770,
        "other": 3389,
        "total": 33973,
        "transactions": 1688,
        "tps": 561.24,
        "queries": 33973,
        "qps": 11295.64,
        "ignored_errors": 13,
        "ignored_errors_per_s": 4.32,
        "reconnects": 0,
        "reconnects_per_s": 0.0,
    }
    assert final.general == {"total_time_s": 3.0057, "total_events": 1688}
    assert final.latency == {
        "min": 0.96,
        "avg": 3.56,
        "max": 13.04,
        "percentile": 95.0,
        "percentile_value": 5.28,
        "sum": 6003.87,
    }
    assert final.fairness == {
        "events_avg": 844.0,
        "events_stddev": 1.0,
        "exec_time_avg": 3.0019,
        "exec_time_stddev": 0.0,
    }
    assert final.unfinished_transactions is None


def test_it_reads_the_99th_percentile_label():
    result = parse("oltp_percentile_99")
    assert [(s.latency_pct, s.latency_ms) for s in result.samples] == [(99.0, 6.32), (99.0, 9.06)]
    assert result.final is not None
    assert result.final.latency["percentile"] == 99.0
    assert result.final.latency["percentile_value"] == 7.84
    assert result.header["percentile"] == 99.0


def test_percentile_zero_reads_the_label_and_leaves_no_percentile_in_the_report():
    result = parse("oltp_percentile_0")
    assert [(s.latency_pct, s.latency_ms) for s in result.samples] == [(0.0, 0.0), (0.0, 0.0)]
    assert result.final is not None
    assert result.final.latency == {"min": 0.95, "avg": 3.16, "max": 10.98, "sum": 4003.24}
    assert result.unrecognised_lines == 0


def test_it_reads_the_latency_histogram_into_the_report_that_follows_it():
    final = parse("oltp_histogram").final
    assert final is not None
    assert len(final.histogram) == 116
    assert final.histogram[:2] == [(0.456, 11), (0.464, 168)]
    assert final.histogram[-1] == (9.910, 1)
    assert sum(count for _, count in final.histogram) == final.general["total_events"] == 6884
    assert final.sql["transactions"] == 6884


def test_checkpoint_reports_come_before_the_final_report():
    result = parse("oltp_checkpoints")
    assert [r.checkpoint_s for r in result.reports] == [2.0, None]
    checkpoint, final = result.reports
    assert checkpoint.sql["transactions"] == 1174
    assert checkpoint.general["total_time_s"] == 2.0002
    assert final.sql["transactions"] == 1304
    assert final.sql["tps"] == 651.36
    assert result.final is final
    assert result.header["report_checkpoints"] == [2.0]


def test_the_steady_report_is_the_final_one_covering_the_time_after_the_checkpoint():
    result = parse("oltp_checkpoints")
    assert result.steady is result.final
    assert result.steady is not None
    # The counters restart at the checkpoint; the total time still spans the run.
    assert result.steady.fairness["exec_time_avg"] == 2.0014
    assert result.steady.general["total_time_s"] == 4.0044


def test_an_interval_line_between_a_checkpoint_title_and_its_report_is_a_sample():
    result = parse("oltp_checkpoints")
    assert [s.time_s for s in result.samples] == [1.0, 2.0, 3.0, 4.0]
    assert result.unrecognised_lines == 0


def test_it_reads_zero_latency_right_after_a_checkpoint():
    result = parse("oltp_checkpoints_histogram")
    assert [r.checkpoint_s for r in result.reports] == [1.0, 2.0, 3.0, None]
    assert result.samples[-1].time_s == 3.0
    assert result.samples[-1].latency_ms == 0.0
    assert [len(r.histogram) for r in result.reports] == [0, 0, 0, 230]
    assert result.outcome == "ok"


def test_forced_shutdown_with_exit_2_is_a_valid_result():
    result = parse("oltp_forced_shutdown")
    assert result.exit_code == 2
    assert result.forced_shutdown is True
    assert result.errors == []
    assert result.outcome == "forced_shutdown"
    assert result.final is not None
    assert result.final.unfinished_transactions == 2
    assert result.final.sql["transactions"] == 1243
    assert result.header["forced_shutdown_s"] == 2


def test_exit_2_without_the_forced_shutdown_message_is_an_error():
    lines = [line for line in text_of("oltp_forced_shutdown").splitlines() if "FATAL" not in line]
    result = parse_text("\n".join(lines), exit_code=2)
    assert result.forced_shutdown is False
    assert result.outcome == "error"


def test_it_reads_a_write_only_test():
    result = parse("oltp_insert")
    assert [s.reads for s in result.samples] == [0.0, 0.0]
    assert result.final is not None
    assert result.final.sql["write"] == result.final.sql["total"] == 9191


def test_the_thread_count_follows_threads_that_stop():
    result = parse("lua_threads_drop")
    assert [s.threads for s in result.samples] == [2, 1, 1, 1]
    assert result.outcome == "ok"


def test_a_report_cut_short_is_not_a_result():
    lines = text_of("oltp_read_write").splitlines()
    cut = lines[: lines.index("General statistics:")]
    result = parse_text("\n".join(cut), exit_code=0)
    assert result.final is not None
    assert result.final.sql["transactions"] == 1688
    assert result.outcome == "error"


def test_an_exit_code_of_1_fails_the_run_even_with_a_report():
    assert parse_text(text_of("oltp_read_write"), exit_code=1).outcome == "error"


def test_an_unknown_exit_code_leaves_the_outcome_to_the_output():
    assert parse_text(text_of("oltp_read_write")).outcome == "ok"


# ---- errors ---------------------------------------------------------------------

ERROR_CASES = [
    ("err_connect_refused", "connect", 2002),
    ("err_socket", "connect", 2002),
    ("err_lost_connection", "connect", 2013),
    ("err_access_denied", "access_denied", 1045),
    ("err_missing_table", "missing_table", 1146),
    ("err_open_files", "open_files", 2001),
    ("err_open_files_tcp", "open_files", 2004),
    ("err_open_files_script", "open_files", None),
    ("err_max_connections", "too_many_connections", 1040),
    ("err_too_many_connections", "too_many_connections", 1226),
    ("err_unknown_host", "unknown_host", 2005),
    ("err_lua_no_script", "lua", None),
    ("err_lua_syntax", "lua", None),
    ("err_lua_runtime", "lua", None),
    ("err_option_unknown", "option", None),
    ("err_option_invalid", "option", None),
    ("err_no_command", "option", None),
    ("err_pgsql_connect", "pgsql_connect", None),
    ("err_deadlock_midrun", "other", 1213),
    ("err_fileio_not_prepared", "other", None),
    ("err_prepared_statements", "other", 1461),
]


@pytest.mark.parametrize(("name", "kind", "code"), ERROR_CASES)
def test_it_names_the_cause_of_a_failed_run(name: str, kind: str, code: int | None):
    result = parse(name)
    assert result.exit_code == 1
    assert result.outcome == "error"
    assert result.final is None
    error = primary(name)
    assert (error.kind, error.code) == (kind, code)
    assert error.hint
    assert error.message in text_of(name)


def test_error_messages_keep_sysbench_words():
    error = primary("err_missing_table")
    assert error.message == "MySQL error: 1146 \"Table 'sbtest.sbtest1' doesn't exist\""
    assert error.code == 1146


def test_the_hints_say_what_to_do():
    assert "prepare" in primary("err_missing_table").hint
    assert "ulimit -n" in primary("err_open_files").hint
    assert "max_connections" in primary("err_max_connections").hint
    assert "credentials" in primary("err_access_denied").hint
    assert "fileio prepare" in primary("err_fileio_not_prepared").hint
    assert "--mysql-ignore-errors=1213" in primary("err_deadlock_midrun").hint
    assert (
        "max_prepared_stmt_count in the plan's server settings"
        in primary("err_prepared_statements").hint
    )


def test_a_connect_failure_lists_every_line_in_order():
    result = parse("err_connect_refused")
    assert [(e.kind, e.code) for e in result.errors] == [
        ("connect", None),
        ("connect", 2002),
        ("thread_init", None),
        ("thread_init", None),
    ]
    assert result.errors[0].message == (
        "unable to connect to MySQL server on host '127.0.0.1', port 3999, aborting..."
    )
    assert result.unrecognised_lines == 0  # "(last message repeated 1 times)" included


def test_a_pgsql_error_keeps_its_continuation_line():
    error = parse("err_pgsql_connect").errors[0]
    assert error.message == (
        'Connection to database failed: connection to server at "127.0.0.1", port 5999 '
        "failed: Connection refused\n"
        "\tIs the server running on that host and accepting TCP/IP connections?"
    )


def test_a_run_that_fails_midway_keeps_the_samples_printed_before():
    result = parse("err_lost_connection")
    assert [s.tps for s in result.samples] == [2709.98, 3184.96]
    assert result.reports == []
    assert result.outcome == "error"


def test_a_missing_script_before_the_workers_start_is_a_lua_error():
    assert [e.kind for e in parse("err_lua_no_script").errors] == ["lua"]
    # The same words once the workers start mean the file descriptors ran out.
    assert parse("err_open_files_script").errors[0].kind == "open_files"


def test_the_warning_of_a_missing_prepare_is_kept():
    result = parse("err_fileio_not_prepared")
    assert result.warnings == ["Did you forget to run the prepare step?"]


# ---- sysbench 1.0 non-SQL tests -------------------------------------------------


def test_it_reads_the_cpu_test():
    result = parse("cpu")
    assert [(s.eps, s.latency_ms) for s in result.samples] == [(39917.39, 0.04), (20129.88, 0.05)]
    assert result.header["cpu_max_prime"] == 2000
    assert result.final is not None
    assert result.final.general == {
        "events_per_s": 30063.84,
        "total_time_s": 2.0072,
        "total_events": 60379,
    }
    assert result.final.sql == {}


def test_it_reads_the_fileio_test():
    result = parse("fileio")
    assert result.samples[0].extra == {
        "read_mib_per_s": 547.37,
        "written_mib_per_s": 364.91,
        "fsyncs_per_s": 2331.46,
    }
    assert result.samples[0].threads == 2
    assert result.samples[0].latency_ms == 0.007
    assert result.final is not None
    assert result.final.general == {
        "file_reads_per_s": 36142.54,
        "file_writes_per_s": 24095.03,
        "file_fsyncs_per_s": 2413.46,
        "read_mib_per_s": 564.73,
        "written_mib_per_s": 376.48,
        "total_time_s": 2.0225,
        "total_events": 126776,
    }
    assert result.header["file_num"] == 4


def test_it_reads_the_memory_test():
    result = parse("memory")
    assert [s.extra for s in result.samples] == [{"mib_per_s": 4815.86}, {"mib_per_s": 4526.65}]
    assert result.final is not None
    assert result.final.general["total_operations"] == 14500977
    assert result.final.general["operations_per_s"] == 4831296.96
    assert result.final.general["mib_transferred"] == 14161.11
    assert result.final.general["mib_per_s"] == 4718.06
    assert result.final.general["total_events"] == 14500977
    assert result.header["memory_block_size"] == "1KiB"
    assert len(result.reports) == 1


@pytest.mark.parametrize(
    ("name", "eps", "events"), [("threads", 4669.92, 17013), ("mutex", 0.0, 2)]
)
def test_it_reads_the_threads_and_mutex_tests(name: str, eps: float, events: int):
    result = parse(name)
    assert result.outcome == "ok"
    assert result.samples[0].eps == eps
    assert result.final is not None
    assert result.final.general["total_events"] == events


def test_deprecated_options_leave_warnings_not_errors():
    result = parse("cpu_deprecated_options")
    assert result.warnings == [
        "the --test option is deprecated. You can pass a script name or path on the command "
        "line without any options.",
        "--num-threads is deprecated, use --threads instead",
        "--max-time is deprecated, use --time instead",
    ]
    assert result.errors == []
    assert result.outcome == "ok"


# ---- legacy 0.5 and 0.4 logs ----------------------------------------------------


def test_it_reads_a_05_log():
    result = parse("legacy_05_oltp_rw")
    assert result.version == "0.5"
    assert result.header["random_seed"] == 42
    assert len(result.samples) == 45
    assert result.samples[0] == IntervalSample(
        time_s=2.0,
        threads=8,
        tps=1041.17,
        qps=None,
        reads=14630.86,
        writes=14612.86,
        other=None,
        latency_pct=95.0,
        latency_ms=11.58,
        errors_per_s=0.0,
        reconnects_per_s=0.0,
    )
    final = result.final
    assert final is not None
    assert final.sql["transactions"] == 94409
    assert final.sql["tps"] == 1037.40
    assert final.sql["queries"] == 2643452 + 188818 == final.sql["total"]
    assert final.sql["ignored_errors"] == 0
    assert final.general["event_execution_time_s"] == 727.8540
    assert final.latency["percentile_value"] == 11.49
    assert final.latency["max"] == 116.86
    assert result.outcome == "ok"
    assert result.unrecognised_lines == 0


def test_it_reads_an_early_05_log_with_per_second_labels_and_no_error_rates():
    result = parse("legacy_05_old_oltp_rw")
    assert len(result.samples) == 120
    last = result.samples[-1]
    assert (last.time_s, last.reads, last.writes, last.latency_pct) == (600.0, 7346.39, 2099.2, 99)
    assert last.errors_per_s is None
    assert result.final is not None
    assert result.final.sql["deadlocks"] == 0
    assert result.final.latency["percentile"] == 99.0
    assert result.unrecognised_lines == 0


def test_it_reads_a_04_log():
    result = parse("legacy_04_oltp_ro")
    assert result.version == "0.4.12"
    assert result.samples == []
    final = result.final
    assert final is not None
    assert final.sql["transactions"] == 457603
    assert final.sql["read_write_requests"] == 457603
    assert final.general["total_time_s"] == 60.0003
    assert final.general["event_execution_time_s"] == 119.6505
    assert final.latency == {
        "min": 0.17,
        "avg": 0.26,
        "max": 0.89,
        "percentile": 95.0,
        "percentile_value": 0.32,
    }
    assert result.unrecognised_lines == 0
    assert result.outcome == "ok"


def test_a_log_that_begins_midway_still_gives_its_samples_and_report():
    lines = text_of("oltp_read_write").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("[ 2s ]"))
    result = parse_text("\n".join(lines[start:]))
    assert result.version is None
    assert [s.time_s for s in result.samples] == [2.0, 3.0]
    assert result.final is not None
    assert result.final.sql["transactions"] == 1688


def test_a_source_comment_is_skipped_only_at_the_top():
    assert parse("legacy_04_oltp_ro").unrecognised_lines == 0
    result = parse_text("sysbench 1.0.20\n# source: somewhere\n")
    assert result.unrecognised_lines == 1


# ---- robustness -----------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_line_of_every_fixture_is_recognised(name: str):
    result = parse(name)
    assert result.unrecognised_lines == 0
    json.dumps(result.to_dict(), allow_nan=False)


def test_garbage_is_counted_not_raised():
    parser = OutputParser()
    for junk in ("\x00\xff\xfe binary", "[ 1s ] thds: two", "SQL statistics", "    read: lots"):
        assert parser.feed(junk) == []
    assert parser.finish(None).unrecognised_lines == 4


def test_a_figure_that_overflows_makes_its_line_unrecognised_not_infinite():
    overflowing = (
        text_of("oltp_histogram")
        .replace("tps: 3690.53 qps", "tps: 1e999 qps")  # the [ 2s ] line
        .replace("       2.032 |", "       1e999 |")  # a histogram row
        .replace("(3433.34 per sec.)", "(1e999 per sec.)")  # transactions
        .replace("percentile:                        0.84", "percentile: 1e999")
    )
    clean = parse("oltp_histogram")

    result = parse_text(overflowing, exit_code_of("oltp_histogram"))

    assert result.unrecognised_lines == 4
    assert [s.time_s for s in result.samples] == [s.time_s for s in clean.samples if s.time_s != 2]
    assert result.final is not None and clean.final is not None
    assert "tps" not in result.final.sql and "transactions" not in result.final.sql
    assert len(result.final.histogram) == len(clean.final.histogram) - 1
    json.dumps(result.to_dict(), allow_nan=False)


def test_a_truncated_interval_line_is_not_a_sample():
    parser = OutputParser()
    assert parser.feed("[ 1s ] thds: 2 tps: 575.80 qps: 11621.71 (r/w/o: 8152.96/2310.1") == []
    assert parser.finish(None).samples == []


FIXTURE_LINES = sorted({line for name in ALL_FIXTURES for line in text_of(name).splitlines()})


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.text(), max_size=20))
def test_random_text_never_raises(lines: list[str]):
    parser = OutputParser()
    for line in lines:
        parser.feed(line)
    assert parser.finish(None).outcome in ("ok", "forced_shutdown", "error")


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.tuples(st.sampled_from(FIXTURE_LINES), st.integers(0, 200)), max_size=30))
def test_truncated_fixture_lines_never_raise(cuts: list[tuple[str, int]]):
    parser = OutputParser()
    for line, length in cuts:
        for event in parser.feed(line[:length]):
            assert isinstance(event, IntervalSample | QueueSample | SysbenchError)
    json.dumps(parser.finish(2).to_dict(), allow_nan=False)


# ---- more legacy and pasted logs --------------------------------------------------


def test_a_collapsed_repeat_counts_the_lines_it_stands_for():
    result = parse("legacy_04_oltp_ro_128")
    # "Time limit exceeded, exiting..." once per thread: 1 printed + 127 collapsed.
    assert result.header["repeated_lines"] == 127
    assert result.header["threads"] == 128
    assert result.final is not None
    assert result.final.sql["transactions"] == 1832488
    assert result.final.latency["percentile_value"] == 8.60
    assert result.outcome == "ok"


def test_it_reads_the_command_line_copied_above_a_legacy_log_and_masks_the_password():
    result = parse("legacy_04_oltp_mixed_cmdline")
    command = result.header["command"]
    assert command["test"] == "oltp"
    assert command["phase"] == "run"  # the run line follows the prepare line
    options = command["options"]
    assert options["threads"] == "4"  # --num-threads
    assert options["table-size"] == "1000000"  # --oltp-table-size
    assert options["time"] == "60"  # --max-time
    assert options["events"] == "0"  # --max-requests
    assert options["mysql-password"] == "***"
    assert "password=sbtest" not in json.dumps(result.to_dict())
    assert "--mysql-password=***" in command["text"]


def test_a_log_pasted_indented_with_its_mixed_mode_lines_is_read_whole():
    result = parse("legacy_04_oltp_mixed_cmdline")
    assert result.unrecognised_lines == 0
    assert result.header["repeated_lines"] == 3
    final = result.final
    assert final is not None
    assert final.sql["transactions"] == 65455
    assert final.sql["queries"] == 916370 + 130910
    assert final.latency["max"] == 145.89
    assert final.fairness["events_avg"] == 16363.75


def test_a_shell_prompt_before_the_command_and_deprecation_warnings_are_kept_apart():
    result = parse("fileio_11_cmdline_deprecated")
    assert result.version == "1.1.0-4e0e44c"
    assert result.header["command"]["test"] == "fileio"
    assert result.header["command"]["options"]["file-num"] == "64"
    assert result.header["command"]["options"]["time"] == "60"  # --max-time
    assert result.warnings == [
        "the --test option is deprecated. You can pass a script name or path on the command "
        "line without any options.",
        "--max-time is deprecated, use --time instead",
    ]
    assert result.errors == []
    assert result.final is not None
    assert result.final.general["file_fsyncs_per_s"] == 238.82
    assert result.final.latency["percentile_value"] == 6.91


def test_it_reads_an_05_log_seeded_from_the_timer_without_a_comma_before_the_response_time():
    result = parse("legacy_05_timer_seed")
    assert len(result.samples) == 60
    assert result.header["report_interval"] == 10
    last = result.samples[-1]
    assert (last.time_s, last.threads, last.tps, last.latency_ms, last.latency_pct) == (
        600.0,
        4,
        1808.45,
        2.54,
        99.0,
    )
    assert result.final is not None
    assert result.final.sql["tps"] == 1779.23
    assert result.unrecognised_lines == 0


def test_it_reads_a_04_cpu_log():
    result = parse("legacy_04_cpu_prompt")
    assert result.header["doing"] == ["CPU performance"]
    assert result.header["cpu_max_prime"] == 20000
    assert result.header["command"]["options"] == {"cpu-max-prime": "20000"}
    assert result.final is not None
    assert result.final.general["total_events"] == 10000
    assert result.final.latency["avg"] == 4.61
    assert result.outcome == "ok"


def test_it_reads_a_04_memory_log():
    result = parse("legacy_04_memory_prompt")
    assert result.header["memory_block_size"] == "1024K"
    assert result.header["memory_total_size"] == "10240M"
    assert result.header["memory_operation"] == "write"
    final = result.final
    assert final is not None
    assert final.general["total_operations"] == 10240
    assert final.general["operations_per_s"] == 3855.80
    assert final.general["mib_per_s"] == 3855.80
    assert len(result.reports) == 1


def test_it_reads_a_04_fileio_log_and_derives_its_rates():
    result = parse("legacy_04_fileio_prompt")
    final = result.final
    assert final is not None
    assert len(result.reports) == 1
    general = final.general
    assert (general["file_reads"], general["file_writes"], general["file_other"]) == (
        195660,
        130440,
        417378,
    )
    assert general["read_mib"] == 2.9855 * 1024
    assert general["mib_per_s"] == 16.984
    assert general["requests_per_s"] == 1087.00
    # 1.0 prints rates: the same figures over the total time
    assert general["file_reads_per_s"] == round(195660 / 300.0005, 2)
    assert result.header["file_total_size"] == "192Gb"


def test_an_05_log_that_begins_midway_takes_the_threads_from_its_lines():
    lines = text_of("legacy_05_oltp_rw").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("[  40s]"))
    result = parse_text("\n".join(lines[start:]))
    assert result.version is None
    assert "threads" not in result.header
    assert result.samples[0].time_s == 40.0
    assert {s.threads for s in result.samples} == {8}
    assert result.final is not None
    assert result.final.sql["transactions"] == 94409
    assert result.outcome == "ok"


def test_a_log_that_begins_inside_a_report_keeps_the_blocks_that_follow():
    lines = text_of("oltp_read_write").splitlines()
    start = lines.index("General statistics:") - 3  # two lines of SQL statistics, a blank
    result = parse_text("\n".join(lines[start:]))
    assert result.unrecognised_lines == 2
    assert result.final is not None
    assert result.final.general["total_events"] == 1688
    assert result.final.latency["percentile_value"] == 5.28


@pytest.mark.parametrize(
    ("line", "test", "options"),
    [
        (
            "sysbench --threads 64 --rate 200 --oltp-reconnect --oltp-table-size 1000000 "
            "/usr/share/sysbench/tests/include/oltp_legacy/select.lua run",
            "select",
            {"threads": "64", "rate": "200", "oltp-reconnect": "on", "table-size": "1000000"},
        ),
        (
            "$ sysbench --test oltp --oltp-tables-count=8 --num-threads=4 run",
            "oltp",
            {"tables": "8", "threads": "4"},
        ),
        (
            "+ ./sysbench oltp_read_write --tables=2 --histogram --percentile=99 run",
            "oltp_read_write",
            {"tables": "2", "histogram": "on", "percentile": "99"},
        ),
    ],
)
def test_it_reads_command_lines_in_every_spelling(line: str, test: str, options: dict):
    result = parse_text(line)
    assert result.unrecognised_lines == 0
    assert result.header["command"]["test"] == test
    assert result.header["command"]["options"] == options


def test_passwords_are_masked_in_every_spelling():
    assert redact_secrets("sysbench --pgsql-password='a b' --mysql-password x run") == (
        "sysbench --pgsql-password=*** --mysql-password *** run"
    )
    assert read_command("--mysql_password=secret run") == {
        "text": "sysbench --mysql_password=*** run",
        "test": None,
        "phase": "run",
        "options": {"mysql-password": "***"},
    }


def test_the_version_line_is_not_a_command_line():
    result = parse_text("sysbench 0.4.12:  multi-threaded system evaluation benchmark")
    assert result.version == "0.4.12"
    assert "command" not in result.header
