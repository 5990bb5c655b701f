"""sysbench's own CPU, read each second on its load host (issue 49): the client is blamed
only when sysbench itself was saturated, and other processes' share is the rest of the
machine beyond the database and sysbench, whenever they came. Snapshots from /proc files
captured on this machine (tests/fixtures/proc/: sysbench-stat-*.txt is a two-thread
`sysbench cpu` run's /proc/<pid>/stat a second apart, 3 threads listed in its task/, here
paired with mariadb-*.txt's machine files)."""

from __future__ import annotations

from pathlib import Path

from runs.analysis.host_metrics import disturbed, procfs
from runs.analysis.host_metrics.bottleneck import RunLoad, bottleneck_classify
from runs.analysis.host_metrics.host_summary import HostSeries, host_summary
from runs.analysis.results import RunFigures
from runs.loadhosts.procfiles import sysbench_stat

PROC = Path(__file__).resolve().parents[2] / "fixtures" / "proc"
FLAT = RunLoad(tps=[300.0, 301.0, 299.0], latency_ms=3.0, same_machine=True, threads=1)


def captured(n: int) -> procfs.ProcSnapshot:
    """The machine's files of mariadb-<n>.txt, and sysbench's stat read as the worker does."""
    snapshot = procfs.snapshot_parse((PROC / f"mariadb-{n}.txt").read_text())
    stat = (PROC / f"sysbench-stat-{n}.txt").read_bytes()
    snapshot.sysbench = sysbench_stat(int(stat.split()[0]), stat)
    return snapshot


def test_sysbench_s_own_cpu_is_read_from_its_process_stat_over_all_threads():
    before, after = captured(1), captured(2)
    assert before.sysbench is not None and after.sysbench is not None
    _pid, utime, stime = after.sysbench
    ticks = utime + stime - sum(before.sysbench[1:])
    values = procfs.host_values(before, after, clk_tck=100)
    assert values is not None
    seconds = after.uptime_s - before.uptime_s
    expected = round(100 * ticks / 100 / seconds / values["ncpu"], 1)
    assert ticks > 0 and values["sysbench_cpu_pct"] == expected


def test_no_figure_before_it_started_and_one_that_started_counts_from_zero():
    before, after = captured(1), captured(2)
    values = procfs.host_values(before, before.__class__(**{**vars(after), "sysbench": None}))
    assert values is not None and "sysbench_cpu_pct" not in values
    before.sysbench = None  # started within the interval
    values = procfs.host_values(before, after, clk_tck=100)
    assert values is not None
    assert values["sysbench_cpu_pct"] > 0  # all of its ticks, from zero


def test_a_gone_process_reads_as_none():
    assert sysbench_stat(4242, b"") is None


def test_the_ssh_loop_s_sysbench_section_reads_as_this_machine_s_reader():
    # The remote loop ends each second with `==> sysbench <==` and the process's stat.
    stat = (PROC / "sysbench-stat-2.txt").read_bytes()
    text = (PROC / "mariadb-2.txt").read_text() + "==> sysbench <==\n" + stat.decode()
    parsed = procfs.snapshot_parse(text)
    assert parsed.sysbench is not None
    assert parsed.sysbench == sysbench_stat(int(stat.split()[0]), stat)
    assert parsed.processes == procfs.snapshot_parse((PROC / "mariadb-2.txt").read_text()).processes


def second(busy: float, db_cores: float, sysbench_pct: float) -> dict:
    return {
        "cpu": {"user": busy * 0.8, "system": busy * 0.2, "iowait": 0.0, "steal": 0.0,
                "idle": 100.0 - busy},
        "ncpu": 2,
        "runq": 2.0,
        "db": {"user_cores": db_cores, "system_cores": 0.0, "vcsw_s": 0.0, "nvcsw_s": 0.0},
        "sysbench_cpu_pct": sysbench_pct,
    }  # fmt: skip


def one_machine(seconds: list[dict]) -> dict:
    """sysbench beside the database server: the machine's rows as server and load host
    (the load host's without the database, as the sampler writes them)."""
    rows = [(float(t), v) for t, v in enumerate(seconds, start=1)]
    load = [(t, {k: x for k, x in v.items() if k != "db"}) for t, v in rows]
    series = [HostSeries("server", "local", rows, run_s=len(rows)),
              HostSeries("load", "local", load, run_s=len(rows))]  # fmt: skip
    return host_summary(series, warmup_s=0.0, tps=300.0)


# 4 burners started 1 s into the run, and the first steady second already burned (the
# run measured at the issue): every second the same, so no second is quieter than
# another and the guess from the host's totals read no neighbour at all.
BURNED_THROUGHOUT = one_machine([second(100.0, 0.3, 12.0)] * 5)


def test_neighbours_every_steady_second_are_read_from_sysbench_s_own_cpu():
    server = BURNED_THROUGHOUT["hosts"][0]
    assert server["sysbench_pct"] == 12.0
    # 100 % busy less the database's 15 % and sysbench's 12 %
    assert server["others_pct"] == 73.0


def test_a_run_beside_neighbours_is_theirs_not_the_client_s():
    verdict = bottleneck_classify(BURNED_THROUGHOUT, FLAT)
    assert verdict["kind"] == "other_processes" and verdict["client_bound"] is False
    assert "database 15 %, sysbench 12 %, others 73 %" in verdict["evidence"][0]
    # The same seconds without sysbench's own CPU (an SSH load host; the runs of issue 49):
    # the guess from the host's totals takes all the rest for sysbench's.
    unread = [{k: v for k, v in second(100.0, 0.3, 12.0).items() if k != "sysbench_cpu_pct"}]
    guessed = bottleneck_classify(one_machine(unread * 5), FLAT)
    assert guessed["kind"] == "load_cpu" and "sysbench 85 %" in guessed["evidence"][0]


def test_sysbench_and_the_database_saturating_their_machine_still_measure_the_client():
    alone = one_machine([second(99.0, 0.35, 80.0)] * 4)  # others 1.5 %
    verdict = bottleneck_classify(alone, FLAT)
    assert verdict["kind"] == "load_cpu" and verdict["client_bound"] is True


def load_host(busy: float, sysbench_pct: float) -> dict:
    """A load host of its own beside a quiet server."""
    server = [(float(t), second(30.0, 0.3, 0.0)) for t in range(1, 5)]
    values = {k: v for k, v in second(busy, 0.0, sysbench_pct).items() if k != "db"}
    load = [(float(t), values) for t in range(1, 5)]
    series = [HostSeries("server", "db", server, run_s=4), HostSeries("load", "lh", load, run_s=4)]
    return host_summary(series, warmup_s=0.0, tps=300.0)


def test_the_client_is_blamed_when_sysbench_used_what_its_threads_can():
    # One thread on two cores: 0.96 of a core is all it can use, the host half idle.
    one_thread = bottleneck_classify(
        load_host(55.0, 48.0), RunLoad(tps=[300.0], latency_ms=3.0, threads=1)
    )
    assert one_thread["kind"] == "load_cpu" and one_thread["client_bound"] is True
    assert (
        "sysbench's own process used 0.96 of the 1 cores its 1 threads can use (96 %)"
        in (one_thread["evidence"][0])
    )
    # The same host full of other processes, sysbench a third of a core: theirs.
    crowded = bottleneck_classify(
        load_host(100.0, 15.0), RunLoad(tps=[300.0], latency_ms=3.0, threads=1)
    )
    assert crowded["kind"] == "other_processes" and crowded["client_bound"] is False
    assert "other processes 85 % of its 2 cores" in crowded["evidence"][0]
    assert "it was not saturated" in crowded["evidence"][0]


def run(run_id: int, tps: float, summary: dict) -> RunFigures:
    return RunFigures(
        id=run_id, position=run_id - 1, round=0, threads=1, settings={"sync_binlog": "1"},
        axis_options={}, status="done", summary={"tps": tps}, host_summary=summary,
        bottleneck=bottleneck_classify(summary, FLAT),
    )  # fmt: skip


def test_the_repeat_burned_throughout_is_singled_out_its_machine_named_once():
    quiet = one_machine([second(60.0, 0.35, 40.0)] * 5)
    runs = [run(1, 300.0, quiet), run(2, 120.0, BURNED_THROUGHOUT), run(3, 310.0, quiet)]
    found = disturbed.disturbed_runs(runs)
    assert [d.run.id for d in found] == [2]
    assert "database 15 %, sysbench 12 %, others 73 %" in found[0].why
    assert quiet["hosts"][0]["others_pct"] == 2.5  # the machine beyond the two: no neighbour
    assert disturbed.disturbed_runs([run(1, 300.0, quiet), run(3, 310.0, quiet)]) == []


def test_a_last_second_after_sysbench_ended_does_not_undo_the_measure():
    # The stream's last row may come after sysbench was reaped: no figure in it.
    ended = {k: v for k, v in second(100.0, 0.3, 12.0).items() if k != "sysbench_cpu_pct"}
    summary = one_machine([second(100.0, 0.3, 12.0)] * 5 + [ended])
    server = summary["hosts"][0]
    assert server["sysbench_pct"] == 12.0 and server["others_pct"] == 73.0
    # Read in under most seconds: no figure, the guess from the totals instead.
    few = one_machine([second(100.0, 0.3, 12.0)] + [ended] * 4)
    assert few["hosts"][0]["sysbench_pct"] is None and few["hosts"][0]["others_pct"] == 0.0
