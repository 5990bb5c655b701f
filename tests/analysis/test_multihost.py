"""Merging what several load hosts printed for one cell, on real output: two sysbench
processes started together against one MariaDB (tests/fixtures/sysbench/multihost_*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.analysis import multihost
from runs.analysis.noise import stats
from runs.sysbench.output import IntervalSample, Report
from runs.sysbench.parser import ParseResult, parse_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sysbench"


def host_output(name: str) -> ParseResult:
    exit_code = int((FIXTURES / f"multihost_{name}.exit").read_text())
    return parse_text((FIXTURES / f"multihost_{name}.txt").read_text(), exit_code)


@pytest.fixture(scope="module")
def hosts() -> list[ParseResult]:
    return [host_output("a"), host_output("b")]


def final(result: ParseResult) -> Report:
    assert result.final is not None, "the fixture holds a complete report"
    return result.final


def test_threads_split_as_evenly_as_whole_threads_go():
    assert multihost.split_evenly(5, 2) == [3, 2]
    assert multihost.split_evenly(64, 3) == [22, 21, 21]
    assert multihost.split_evenly(2, 2) == [1, 1]


def test_a_split_that_leaves_a_host_without_load_is_refused():
    with pytest.raises(ValueError, match="cannot be split over 3 load hosts"):
        multihost.split_evenly(2, 3)


def test_the_cells_throughput_is_the_sum_of_the_hosts_own_final_reports(hosts):
    merged = final(multihost.merge_results(hosts))
    assert merged.sql["tps"] == pytest.approx(sum(final(h).sql["tps"] for h in hosts))
    assert merged.sql["transactions"] == sum(final(h).sql["transactions"] for h in hosts)
    assert merged.general["total_events"] == sum(final(h).general["total_events"] for h in hosts)
    assert merged.general["total_time_s"] == max(final(h).general["total_time_s"] for h in hosts)


def test_the_cells_p95_comes_from_the_summed_histogram_not_an_average(hosts):
    merged = final(multihost.merge_results(hosts))
    summed: dict[float, int] = {}
    for host in hosts:
        for value, count in final(host).histogram:
            summed[value] = summed.get(value, 0) + count
    expected = stats.percentile_from_histogram(summed.items(), 95)
    assert merged.latency["percentile_value"] == expected
    assert sum(c for _, c in merged.histogram) == sum(summed.values())
    own = sorted(final(h).latency["percentile_value"] for h in hosts)
    # A mixture's quantile lies between its parts' quantiles (bucket rounding aside).
    assert own[0] - 0.05 <= expected <= own[1] + 0.05
    # The histogram's rule reproduces each host's own printed p95.
    for host in hosts:
        assert stats.percentile_from_histogram(final(host).histogram, 95) == pytest.approx(
            final(host).latency["percentile_value"], abs=0.01
        )


def test_the_average_latency_is_weighted_by_events_and_extremes_are_kept(hosts):
    merged = final(multihost.merge_results(hosts))
    events = sum(final(h).general["total_events"] for h in hosts)
    assert merged.latency["avg"] == pytest.approx(
        sum(final(h).latency["sum"] for h in hosts) / events
    )
    assert merged.latency["min"] == min(final(h).latency["min"] for h in hosts)
    assert merged.latency["max"] == max(final(h).latency["max"] for h in hosts)


def test_intervals_add_up_on_the_interval_clock_and_keep_the_worst_latency(hosts):
    merged = multihost.merge_intervals([h.samples for h in hosts])
    assert [s.time_s for s in merged] == [s.time_s for s in hosts[0].samples]
    for sample in merged:
        parts = [next(s for s in h.samples if s.time_s == sample.time_s) for h in hosts]
        assert sample.tps == pytest.approx(sum(p.tps for p in parts))
        assert sample.qps == pytest.approx(sum(p.qps for p in parts))
        assert sample.threads == sum(p.threads for p in parts)
        assert sample.latency_ms == max(p.latency_ms for p in parts)


def test_an_interval_only_some_hosts_reported_is_left_out():
    def tick(t: float, tps: float) -> IntervalSample:
        return IntervalSample(t, 1, tps, tps, 0.0, tps, 0.0, 95.0, 1.0, 0.0, 0.0)

    merged = multihost.merge_intervals([[tick(1, 10), tick(2, 10)], [tick(1, 5)]])
    assert [(s.time_s, s.tps) for s in merged] == [(1, 15)]


def test_an_error_on_one_host_is_the_cells_error(hosts):
    failed = parse_text((FIXTURES / "err_lost_connection.txt").read_text(), 1)
    merged = multihost.merge_results([hosts[0], failed])
    assert merged.outcome == "error"
    assert merged.errors == failed.errors
