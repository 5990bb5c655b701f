"""Other processes over the whole run (issue 49): host summaries made from per-second
rows, as a run's sampler writes them. Neighbours that start mid-run are theirs, not the
client's: the repeat they slowed is singled out; a client is blamed only when sysbench
itself saturated its host."""

from __future__ import annotations

from runs.analysis.host_metrics import disturbed
from runs.analysis.host_metrics.bottleneck import RunLoad, bottleneck_classify
from runs.analysis.host_metrics.host_summary import HostSeries, host_summary
from runs.analysis.results import RunFigures

FLAT = RunLoad(tps=[300.0, 301.0, 299.0], latency_ms=3.0, same_machine=True)


def second(busy: float, db_cores: float | None = None) -> dict:
    values: dict = {
        "cpu": {"user": busy * 0.8, "system": busy * 0.2, "iowait": 0.0, "steal": 0.0,
                "idle": 100.0 - busy},
        "ncpu": 2,
        "runq": 2.0,
    }  # fmt: skip
    if db_cores is not None:
        values["db"] = {"user_cores": db_cores, "system_cores": 0.0, "vcsw_s": 0.0, "nvcsw_s": 0.0}
    return values


def one_machine(seconds: list[dict]) -> dict:
    """sysbench beside the database server: the machine's rows as server and load host."""
    rows = [(float(t), v) for t, v in enumerate(seconds, start=1)]
    series = [HostSeries(role, "local", rows, run_s=len(rows)) for role in ("server", "load")]
    return host_summary(series, warmup_s=0.0, tps=300.0)


# 4 CPU burners started 1 s into the run: the first second sysbench (40 %) and the
# database (20 %) alone, then the machine full.
BURNERS_MID_RUN = one_machine([second(60.0, 0.4), second(100.0, 0.3), second(100.0, 0.3)])
# sysbench alone saturating the machine beside a database that used a tenth of it.
SYSBENCH_SATURATES = one_machine([second(98.0, 0.2), second(99.0, 0.2), second(97.0, 0.2)])


def test_the_summary_holds_other_processes_share_over_the_run():
    server = BURNERS_MID_RUN["hosts"][0]
    # Each second's share beyond the database: 40, 85, 85; above the quietest: 0, 45, 45.
    assert server["others_pct"] == 30.0
    assert SYSBENCH_SATURATES["hosts"][0]["others_pct"] == 1.0


def test_a_second_the_server_stalled_in_is_not_taken_for_the_quietest():
    # sysbench (40 %) beside the database (20 %) all along, one second of a stall where
    # both idled: no neighbour came, and none is read (that second taken for the quietest
    # read 27 %: a mean of 31 % above its 4 %).
    stalled = one_machine([second(60.0, 0.4), second(5.0, 0.02), second(60.0, 0.4),
                           second(60.0, 0.4)])  # fmt: skip
    assert stalled["hosts"][0]["others_pct"] == 0.0


def test_neighbours_that_start_mid_run_are_not_blamed_on_the_client():
    verdict = bottleneck_classify(BURNERS_MID_RUN, FLAT)  # quiet before sysbench started
    assert verdict["kind"] != "load_cpu" and verdict["client_bound"] is False
    assert not any("this figure measures the client" in e for e in verdict["evidence"])


def test_sysbench_saturating_its_host_measures_the_client():
    verdict = bottleneck_classify(SYSBENCH_SATURATES, FLAT)
    assert verdict["kind"] == "load_cpu" and verdict["client_bound"] is True
    assert "sysbench 88 %, other processes 0 %" in verdict["evidence"][0]


def load_host(seconds: list[float]) -> dict:
    """A load host of its own: the server quiet, the load host's rows as given."""
    server = [(float(t), second(30.0, 0.3)) for t in range(1, len(seconds) + 1)]
    load = [(float(t), second(busy)) for t, busy in enumerate(seconds, start=1)]
    series = [HostSeries("server", "db", server, run_s=len(seconds)),
              HostSeries("load", "lh", load, run_s=len(seconds))]  # fmt: skip
    return host_summary(series, warmup_s=0.0, tps=300.0)


def test_a_load_host_saturated_by_neighbours_is_theirs_one_saturated_by_sysbench_the_clients():
    flat = RunLoad(tps=[300.0, 301.0, 299.0], latency_ms=3.0)
    shared = bottleneck_classify(load_host([50.0, 100.0, 100.0, 100.0]), flat)
    assert shared["kind"] == "other_processes" and shared["client_bound"] is False
    assert "load host lh was 88 % busy, 38 % of it other processes'" in shared["evidence"][0]
    alone = bottleneck_classify(load_host([96.0, 97.0, 98.0, 97.0]), flat)
    assert alone["kind"] == "load_cpu" and alone["client_bound"] is True


def run(run_id: int, tps: float, summary: dict) -> RunFigures:
    return RunFigures(
        id=run_id, position=run_id - 1, round=0, threads=1, settings={"sync_binlog": "1"},
        axis_options={}, status="done", summary={"tps": tps}, host_summary=summary,
        bottleneck=bottleneck_classify(summary, FLAT),
    )  # fmt: skip


def test_the_repeat_slowed_by_neighbours_mid_run_is_singled_out():
    quiet = one_machine([second(60.0, 0.4), second(61.0, 0.4), second(59.0, 0.4)])
    runs = [run(1, 300.0, quiet), run(2, 120.0, BURNERS_MID_RUN), run(3, 310.0, quiet)]
    found = disturbed.disturbed_runs(runs)
    assert [d.run.id for d in found] == [2]
    assert found[0].why == (
        # one machine named once: its server entry, without the database (issue 49)
        "other processes' share of the CPU over the run: server host local 30 %"
    )
    assert disturbed.disturbed_runs([run(1, 300.0, quiet), run(2, 290.0, BURNERS_MID_RUN)]) == []
