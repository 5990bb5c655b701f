"""A final report a script prints through Lua (`sysbench.hooks.report_cumulative`) is read
as the run's final report, not as one more sample: its text form (sysbench.report_default,
no colon after err/s), report_csv and report_json, after a histogram, and at a checkpoint.

The final_hook_*.txt fixtures were captured from sysbench 1.0.20 running
tests/fixtures/lua/report_final_hook.lua, whose both hooks call sysbench[--hook]:
`sysbench report_final_hook.lua --hook=report_default --time=3 --threads=1
--report-interval=1 --percentile=99 run` (with `--histogram`: final_hook_histogram.txt;
`--time=4 --report-checkpoints=2`: final_hook_checkpoint.txt).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runs.analysis.summary import summarise
from runs.sysbench.output import IntervalSample
from runs.sysbench.parser import OutputParser, parse_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sysbench"
TEXT_LINE = re.compile(r"^\[ (\d+)s \] thds: (\d+) tps: ([\d.]+) .* err/s ", re.MULTILINE)
CSV_LINE = re.compile(r"^(\d+),(\d+),([\d.]+),", re.MULTILINE)
JSON_OBJECT = re.compile(r'"time":\s+(\d+),\s+"threads": (\d+),\s+"tps": ([\d.]+)')


def text_of(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def printed(name: str) -> list[tuple[float, int, float]]:
    text = text_of(name)
    pattern = {"report_csv": CSV_LINE, "report_json": JSON_OBJECT}.get(name[11:], TEXT_LINE)
    return [(float(t), int(n), float(tps)) for t, n, tps in pattern.findall(text)]


@pytest.mark.parametrize(
    "name",
    [
        "final_hook_report_default",
        "final_hook_report_csv",
        "final_hook_report_json",
        "final_hook_histogram",
    ],
)
def test_the_lua_final_report_is_the_runs_report_and_the_intervals_its_samples(name):
    *intervals, final = printed(name)
    assert final[1] == 0  # sysbench calls the hook once its workers are done

    result = parse_text(text_of(name), 0)

    assert [(s.time_s, s.threads, s.tps) for s in result.samples] == intervals
    assert result.unrecognised_lines == 0
    assert result.outcome == "ok"
    report = result.final
    assert report is not None and report.printed_by == "lua"
    assert report.sql["tps"] == final[2]
    assert report.general["total_time_s"] == final[0] == 3.0
    assert report.sql["transactions"] == round(final[2] * 3.0)
    assert report.sql["ignored_errors_per_s"] == 0.0


def test_the_summary_reads_the_lua_final_report():
    result = parse_text(text_of("final_hook_report_default"), 0)

    summary = summarise(result, warmup_s=0)

    assert summary["outcome"] == "ok"
    assert summary["final_report"] == "lua"
    assert summary["tps"] == printed("final_hook_report_default")[-1][2]
    assert summary["transactions"] > 0 and summary["errors"] == 0
    assert (summary["latency_pct"], summary["total_time_s"]) == (99.0, 3.0)
    assert summary["samples"] == len(result.samples) == 2


def test_at_a_checkpoint_the_line_after_its_header_is_its_report():
    result = parse_text(text_of("final_hook_checkpoint"), 0)

    checkpoint, final = result.reports
    assert (checkpoint.checkpoint_s, checkpoint.sql["tps"]) == (2.0, 46055.65)
    assert checkpoint.sql["transactions"] == round(46055.65 * 2)
    # The final report's rates cover the time after the checkpoint only.
    assert final.checkpoint_s is None and final.sql["tps"] == 40919.37
    assert final.sql["transactions"] == round(40919.37 * (4 - 2))
    assert [s.time_s for s in result.samples] == [1.0, 2.0, 3.0, 4.0]


def test_a_last_interval_at_zero_threads_before_sysbenchs_own_report_stays_a_sample():
    parser = OutputParser()
    parser.feed("Threads started!")
    line = (
        "[ 3s ] thds: 0 tps: 5.00 qps: 100.00 (r/w/o: 70.00/20.00/10.00) "
        "lat (ms,95%): 2.00 err/s: 0.00 reconn/s: 0.00"
    )

    assert parser.feed(line) == []  # held until what follows tells
    [sample] = parser.feed("SQL statistics:")

    assert isinstance(sample, IntervalSample) and sample.tps == 5.0


def test_a_zero_threads_line_at_the_end_of_a_failed_run_is_no_report():
    parser = OutputParser()
    for line in (
        "Threads started!",
        "[ 1s ] thds: 0 tps: 5.00 qps: 10.00 "
        "(r/w/o: 7.00/2.00/1.00) lat (ms,95%): 2.00 err/s 0.00 reconn/s 0.00",
    ):
        parser.feed(line)

    [sample] = parser.settle(1)  # a sample still, for the worker to store
    result = parser.finish(1)

    assert isinstance(sample, IntervalSample) and sample.tps == 5.0
    assert result.final is None and result.outcome == "error"
    assert [s.tps for s in result.samples] == [5.0]


def test_the_mix_a_tpcc_script_prints_in_its_final_report_reaches_the_summary():
    text = "\n".join(
        (
            "Threads started!",
            "[ 1s ] thds: 2 tps: 9.00 qps: 250.00 (r/w/o: 110.00/120.00/20.00) "
            "lat (ms,95%): 21.50 err/s 0.50 reconn/s: 0.00 no: 4.00 pt: 3.00 os: 1.00 dl: 0.00 "
            "sl: 1.00",
            "[ 2s ] thds: 0 tps: 8.00 qps: 240.00 (r/w/o: 100.00/120.00/20.00) "
            "lat (ms,95%): 22.00 err/s 0.25 reconn/s: 0.00 no: 3.60 pt: 3.40 os: 0.40 dl: 0.30 "
            "sl: 0.30",
        )
    )

    summary = summarise(parse_text(text, 0), warmup_s=0)

    assert summary["samples"] == 1
    assert (summary["tps"], summary["transactions"], summary["errors"]) == (8.0, 16, 0)
    assert summary["new_order_per_s"] == 3.6 and summary["stock_level_per_s"] == 0.3
