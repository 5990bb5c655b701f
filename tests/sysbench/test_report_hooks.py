"""Every form a script's report hook prints is read: sysbench 1.0.20's Lua
`sysbench.report_default` (no colon after `err/s`), `report_csv` and `report_json`, and the
no-colon form with a script's own spacing.

The hook_report_*.txt fixtures were captured from sysbench 1.0.20 running
tests/fixtures/lua/report_hook.lua, whose event is a CPU loop and whose report_intermediate
hook calls sysbench[--hook]: `sysbench report_hook.lua --hook=report_csv --time=3
--threads=1 --report-interval=1 --percentile=99 run`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from runs.sysbench.parser import IntervalSample, OutputParser, parse_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sysbench"


def text_of(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def interval_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\[\s*\d+s\s*\] thds", line)]


def test_lua_report_default_lines_without_the_colon_are_samples():
    text = text_of("hook_report_default")
    lines = interval_lines(text)
    assert lines and all(" err/s " in line for line in lines)  # the Lua form, no colon

    result = parse_text(text)

    assert len(result.samples) == len(lines)
    assert result.unrecognised_lines == 0
    first = result.samples[0]
    assert first.time_s == 1.0 and first.threads == 1
    assert first.tps == float(lines[0].split("tps: ")[1].split()[0])
    assert (first.latency_pct, first.errors_per_s, first.reconnects_per_s) == (99.0, 0.0, 0.0)


def test_a_scripts_own_print_with_its_own_spacing_is_a_sample():
    line = (
        "[  12s ]  thds:2  tps: 3.10 qps:91.40  (r/w/o: 41.20 / 45.20 / 5.00) "
        "lat (ms, 95%):1109.09, err/s 0.95 reconn/s 0.00"
    )

    [sample] = OutputParser().feed(line)

    assert isinstance(sample, IntervalSample)
    assert (sample.time_s, sample.threads, sample.tps, sample.qps) == (12.0, 2, 3.1, 91.4)
    assert (sample.reads, sample.writes, sample.other) == (41.2, 45.2, 5.0)
    assert (sample.latency_pct, sample.latency_ms, sample.errors_per_s) == (95.0, 1109.09, 0.95)
    assert sample.reconnects_per_s == 0.0


def test_report_csv_lines_carry_the_runs_percentile():
    text = text_of("hook_report_csv")
    rows = [line.split(",") for line in text.splitlines() if re.match(r"^\d+,\d+,", line)]
    assert rows

    told = OutputParser(percentile=99)
    samples = [
        e for line in text.splitlines() for e in told.feed(line) if isinstance(e, IntervalSample)
    ]
    untold = parse_text(text)

    assert [s.tps for s in samples] == [float(row[2]) for row in rows]
    assert [s.latency_ms for s in samples] == [float(row[7]) for row in rows]
    assert {s.latency_pct for s in samples} == {99.0}
    # Nothing in the output says the percentile: sysbench's default, never null.
    assert {s.latency_pct for s in untold.samples} == {95.0}
    assert told.finish(0).unrecognised_lines == 0


def test_report_json_objects_are_samples_each_with_its_closing_line():
    text = text_of("hook_report_json")
    start, end = text.index("\n[\n"), text.index("\n]\n")
    objects = json.loads(text[start : end + 3])  # the array sysbench printed
    assert objects

    parser = OutputParser(percentile=99)
    fed = [(line, parser.feed(line)) for line in text.splitlines()]
    result = parser.finish(0)

    came = [(line, events) for line, events in fed if events]
    assert [line.strip() for line, _ in came] == ["},"] * (len(objects) - 1) + ["}"]
    samples = [e for _, events in came for e in events if isinstance(e, IntervalSample)]
    assert len(samples) == len(came)
    assert [(s.time_s, s.threads, s.tps) for s in samples] == [
        (float(o["time"]), o["threads"], o["tps"]) for o in objects
    ]
    assert [(s.qps, s.reads, s.writes, s.other) for s in samples] == [
        (o["qps"]["total"], o["qps"]["reads"], o["qps"]["writes"], o["qps"]["other"])
        for o in objects
    ]
    assert [(s.latency_ms, s.latency_pct, s.errors_per_s) for s in samples] == [
        (o["latency"], 99.0, o["errors"]) for o in objects
    ]
    assert result.unrecognised_lines == 0 and result.final is not None
    assert result.final.complete


def test_a_json_object_of_another_shape_or_cut_short_is_counted_not_a_sample():
    other = '{"errors": 0, "events": 12}\n'
    cut = '[\n  {\n    "time": 1,\n    "threads": 1,\n'

    result = parse_text(other + cut)

    assert result.samples == []
    assert result.unrecognised_lines == 1 + 3  # the object, and the three lines cut short


def test_tpcc_counters_lines_carry_the_transaction_mix():
    # Written with the format string of sysbench-tpcc's tpcc_counters.lua (its counters
    # need a patched sysbench: not captured here): `reconn/s:` with its colon, then the
    # rate of each transaction.
    line = (
        "[ 3s ] thds: 2 tps: 9.00 qps: 250.00 (r/w/o: 110.00/120.00/20.00) "
        "lat (ms,95%): 21.50 err/s 0.50 reconn/s: 0.00 "
        "no: 4.00 pt: 3.00 os: 1.00 dl: 0.00 sl: 1.00"
    )

    [sample] = OutputParser().feed(line)

    assert isinstance(sample, IntervalSample)
    assert (sample.tps, sample.errors_per_s, sample.reconnects_per_s) == (9.0, 0.5, 0.0)
    assert sample.extra == {
        "new_order_per_s": 4.0,
        "payment_per_s": 3.0,
        "order_status_per_s": 1.0,
        "delivery_per_s": 0.0,
        "stock_level_per_s": 1.0,
    }


def test_a_line_without_the_mix_carries_no_mix():
    [sample] = OutputParser().feed(interval_lines(text_of("hook_report_default"))[0])

    assert isinstance(sample, IntervalSample)
    assert sample.extra == {}
