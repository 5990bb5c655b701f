"""A CPU burner beside one repeat of a cell: the repeat that other processes slowed is
singled out, and the verdict that rests on it says so; a slow repeat on a quiet host, or a
busy host that did not slow its repeat, is not."""

from __future__ import annotations

import dataclasses

from runs.analysis import batch_results
from runs.analysis.host_metrics import disturbed
from runs.analysis.host_metrics.bottleneck import RunLoad, bottleneck_classify
from runs.analysis.results import RunFigures
from tests.analysis.host_metrics.test_bottleneck import host

# The bottleneck of the repeat beside the burner, as the classifier names it: the server
# host at 100 %, the database at a fifth of it.
BURNED = bottleneck_classify(
    {"hosts": [host("server", "db", 100.0, db={"user_cores": 0.3, "system_cores": 0.1}),
               host("load", "lh", 10.0)]},
    RunLoad(tps=[100.0, 110.0], latency_ms=5.0),
)  # fmt: skip
QUIET = bottleneck_classify(
    {"hosts": [host("server", "db", 30.0, db={"user_cores": 0.5, "system_cores": 0.1}),
               host("load", "lh", 10.0)]},
    RunLoad(tps=[600.0, 610.0], latency_ms=1.6),
)  # fmt: skip


def run(run_id: int, sync: str, tps: float, bottleneck: dict) -> RunFigures:
    return RunFigures(
        id=run_id, position=run_id - 1, round=0, threads=1, settings={"sync_binlog": sync},
        axis_options={}, status="done", summary={"tps": tps}, bottleneck=bottleneck,
    )  # fmt: skip


def test_the_repeat_beside_the_burner_is_singled_out_and_its_verdict_says_so():
    assert BURNED["kind"] == "other_processes" and QUIET["kind"] != "other_processes"
    runs = [
        run(1, "0", 600.0, QUIET), run(2, "1", 300.0, QUIET),
        run(3, "0", 610.0, QUIET), run(4, "1", 50.0, BURNED),  # the burner beside it
        run(5, "0", 590.0, QUIET), run(6, "1", 310.0, QUIET),
    ]  # fmt: skip

    found = disturbed.disturbed_runs(runs)
    results = batch_results.build(
        runs, runs[0].series_key, {"server_settings": {"sync_binlog": ["0", "1"]}}
    )

    assert [d.run.id for d in found] == [4]
    assert found[0].others_tps == 305.0 and round(found[0].slower, 1) == 6.1
    said = [s for s in results.summary if "rerun the cell on a quiet machine" in s]
    assert said == [
        "sync_binlog=1 at threads=1: run 4 was 6.1x slower than its cell's other repeats (50 "
        "against 305) while other processes took the CPU (" + BURNED["evidence"][0] + "); "
        "the verdict of sync_binlog=1 at threads=1 rests on it: rerun the cell on a quiet machine"
    ]


def test_a_slow_repeat_on_a_quiet_host_and_a_busy_host_that_did_not_slow_it_are_not():
    slow_quiet = [run(1, "0", 600.0, QUIET), run(2, "0", 100.0, QUIET), run(3, "0", 590.0, QUIET)]
    busy_not_slow = [run(1, "0", 600.0, QUIET), run(2, "0", 580.0, BURNED)]
    alone = [run(1, "0", 50.0, BURNED)]  # no other repeat to be slower than

    assert disturbed.disturbed_runs(slow_quiet) == []
    assert disturbed.disturbed_runs(busy_not_slow) == []
    assert disturbed.disturbed_runs(alone) == []


def test_a_host_busy_at_the_start_counts_as_other_processes_taking_the_cpu():
    busy_start = {**QUIET, "busy_start": "db was 95 % busy before sysbench started"}
    runs = [run(1, "0", 600.0, QUIET), run(2, "0", 200.0, busy_start), run(3, "0", 610.0, QUIET)]
    found = disturbed.disturbed_runs(runs)
    assert [d.run.id for d in found] == [2] and found[0].why == busy_start["busy_start"]
    key = runs[0].series_key
    text = disturbed.sentences(found, {key: "sync_binlog=0"}, key)[0]
    assert text.startswith("sync_binlog=0 at threads=1: run 2 was 3.0x slower")
    assert "every verdict against the baseline at threads=1 rests on it" in text
    failed = [dataclasses.replace(r, status="failed") if r.id == 2 else r for r in runs]
    assert disturbed.disturbed_runs(failed) == []  # a failed run has no verdict to disturb
