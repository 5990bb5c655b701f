"""A run's facts from real captured sysbench output (tests/fixtures/sysbench/)."""

from __future__ import annotations

import re
from pathlib import Path

from runs.analysis.run_facts import (
    ERROR_LINES_PATTERN,
    errors_by_code,
    log_matches,
    log_tail,
    run_facts,
)
from runs.sysbench.parser import parse_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"


def facts_of(name: str, exit_code: int, **extra):
    text = (FIXTURES / f"{name}.txt").read_text()
    result = parse_text(text, exit_code)
    final = result.final
    return run_facts(
        outcome=result.outcome,
        reports=[r.to_dict() for r in result.reports],
        histogram=[list(row) for row in (final.histogram if final else [])],
        counters=extra.get("counters"),
        raw_log=text,
        histogram_option=extra.get("histogram_option", "on"),
    )


def test_a_forced_shutdown_is_an_outcome_with_its_unfinished_transactions():
    facts = facts_of("oltp_forced_shutdown", 2)

    assert facts.outcome_text == "forced shutdown, 2 transactions unfinished"
    assert facts.errors == []  # the FATAL line of the shutdown is not an error
    assert facts.queries == {"read": 17444, "write": 4980, "other": 2490, "total": 24914}
    assert facts.rates[0] == ("transactions", 1243, 620.6)
    assert facts.no_histogram.startswith("sysbench prints no latency histogram on a forced")


def test_an_error_counts_once_without_the_failed_thread_that_follows_it():
    assert [(e.code, e.count) for e in facts_of("err_deadlock_midrun", 1).errors] == [(1213, 1)]


def test_repeated_errors_count_every_repeat():
    # one FATAL line, then "(last message repeated 13 times)"
    errors = facts_of("err_open_files_script", 1).errors

    assert [(e.kind, e.count) for e in errors] == [("open_files", 14)]


def test_the_servers_code_wins_over_sysbenchs_generic_line():
    assert [(e.code, e.kind) for e in facts_of("err_max_connections", 1).errors] == [
        (1040, "too_many_connections")
    ]


def test_a_run_without_histogram_says_why():
    assert facts_of("oltp_read_write", 0, histogram_option="off").no_histogram == (
        "This run had --histogram=off: run sysbench with --histogram=on (benchdash's default)."
    )


def test_counters_per_transaction_divide_the_runs_deltas():
    counters = {"deltas": {"Innodb_rows_read": 24860, "Com_select": 12430, "Uptime": 2}}

    facts = facts_of("oltp_forced_shutdown", 2, counters=counters)

    assert facts.per_transaction == [("Innodb_rows_read", 20.0), ("Com_select", 10.0)]


def test_cpu_has_events_not_transactions():
    facts = facts_of("cpu", 0)

    assert [name for name, _, _ in facts.rates] == ["events"]
    assert facts.latency["min"] > 0


def test_log_tail_and_matches_number_the_lines():
    log = "a\nFATAL: x\nb\nfatal: y\n"

    assert log_tail(log, limit=2).lines == [(3, "b"), (4, "fatal: y")]
    assert log_matches(log, "FATAL", limit=1).lines == [(2, "FATAL: x")]
    assert not log_matches(log, "FATAL", limit=1).complete
    assert errors_by_code("") == []


def test_the_lines_the_database_picks_out_count_the_errors_as_the_whole_log_does():
    """The results count errors from the lines PostgreSQL picks out of each stored log with
    ERROR_LINES_PATTERN (tests/web/test_results_runs_table.py runs it there): the same
    errors, counts and first messages as from the whole log, for every recorded output."""
    with_errors = 0
    for path in sorted(FIXTURES.glob("*.txt")):
        text = path.read_text()
        picked = "\n".join(m.group(1) for m in re.finditer(ERROR_LINES_PATTERN, text, re.M))
        assert errors_by_code(picked) == errors_by_code(text), path.name
        with_errors += bool(errors_by_code(text))
    assert with_errors >= 15  # the comparison is about errors: most err_* outputs have some
