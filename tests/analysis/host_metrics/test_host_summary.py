"""A run's host summary: means over the steady state, per-transaction figures, the
loopback interface counted only when it carried the benchmark."""

from __future__ import annotations

from pathlib import Path

from runs.analysis.host_metrics import procfs
from runs.analysis.host_metrics.host_summary import HostSeries, cell_host_metrics, host_summary
from runs.analysis.results import RunFigures

PROC = Path(__file__).resolve().parents[2] / "fixtures" / "proc"


def recorded_values() -> dict:
    before, after = (procfs.snapshot_parse((PROC / f"mariadb-{i}.txt").read_text()) for i in (1, 2))
    values = procfs.host_values(before, after)
    assert values is not None
    return values


def rows(busy_user: float, **extra: object) -> list[tuple[float, dict]]:
    """Three seconds: the first in the warmup, saturated, the other two as given."""

    def at(user: float) -> dict:
        v = recorded_values()
        v["cpu"] = {"user": user, "system": 5.0, "iowait": 0.0, "steal": 0.0,
                    "idle": 95.0 - user}  # fmt: skip
        v.update(extra)
        return v

    return [(1.0, at(90.0)), (2.0, at(busy_user)), (3.0, at(busy_user))]


def test_means_leave_the_warmup_out():
    summary = host_summary([HostSeries("load", "lh", rows(20.0))], warmup_s=1.0, tps=100.0)
    (host,) = summary["hosts"]
    assert host["role"] == "load" and host["host"] == "lh"
    assert host["intervals"] == 2
    assert host["cpu"]["user"] == 20.0
    assert host["busy_pct"] == 25.0
    assert host["ctxt_per_tx"] == round(host["ctxt_s"] / 100.0, 3)
    assert "db" not in host


def test_the_server_gets_its_process_cpu_per_transaction():
    db = {"user_cores": 0.5, "system_cores": 0.25, "vcsw_s": 300.0, "nvcsw_s": 100.0}
    series = HostSeries("server", "local", rows(20.0, db=db))
    (host,) = host_summary([series], warmup_s=1.0, tps=1000.0)["hosts"]
    assert host["db"]["cpu_us_per_tx"] == 750.0
    assert host["db"]["csw_per_tx"] == 0.4


def test_loopback_counts_only_when_it_carried_the_benchmark():
    nets = {"lo": {"rx_kbs": 500.0, "tx_kbs": 500.0}, "eth0": {"rx_kbs": 1.0, "tx_kbs": 2.0}}
    far = HostSeries("load", "lh", rows(20.0, nets=nets))
    near = HostSeries("load", "lh", rows(20.0, nets=nets), loopback=True)
    assert host_summary([far], warmup_s=1.0, tps=1.0)["hosts"][0]["rx_kbs"] == 1.0
    assert host_summary([near], warmup_s=1.0, tps=1.0)["hosts"][0]["rx_kbs"] == 501.0


def test_stacked_disks_are_not_counted_twice():
    disks = {
        "vda": {
            "r_iops": 10.0,
            "w_iops": 20.0,
            "r_mbs": 1.0,
            "w_mbs": 2.0,
            "await_ms": 1.0,
            "util_pct": 30.0,
        },
        "dm-0": {
            "r_iops": 10.0,
            "w_iops": 20.0,
            "r_mbs": 1.0,
            "w_mbs": 2.0,
            "await_ms": 1.0,
            "util_pct": 30.0,
        },
    }
    (host,) = host_summary(
        [HostSeries("server", "db1", rows(20.0, disks=disks))], warmup_s=1.0, tps=1.0
    )["hosts"]
    assert host["iops"] == 30.0 and host["mbs"] == 3.0 and host["util_pct"] == 30.0


def test_missing_hosts_are_said():
    missing = [{"role": "server", "host": "db1", "why": "no server host"}]
    summary = host_summary([], warmup_s=0, tps=None, missing=missing)
    assert summary == {"hosts": [], "missing": missing}


def test_a_cells_figures_are_the_medians_of_its_repeats_with_its_guards():
    def run(id_: int, busy: float, kind: str, busy_start: str = "") -> RunFigures:
        server = {
            "role": "server",
            "host": "db",
            "busy_pct": busy,
            "cpu": {"iowait": 1.0},
            "iops": 10.0,
            "mbs": 1.0,
            "ctxt_per_tx": 2.0,
            "db": {"cpu_us_per_tx": 90.0},
        }
        load = {"role": "load", "host": "lh", "busy_pct": 99.0, "cpu": {"iowait": 0.0}}
        verdict = {
            "kind": kind,
            "evidence": [f"run {id_}"],
            "client_bound": kind == "load_cpu",
            "same_machine": False,
            "busy_start": busy_start,
        }
        return RunFigures(id=id_, position=id_, round=0, threads=4, settings={"flush": "1"},
                          axis_options={}, status="done", summary={},
                          host_summary={"hosts": [server, load], "missing": []},
                          bottleneck=verdict)  # fmt: skip

    noisy = [run(1, 20.0, "load_cpu"), run(2, 90.0, "server_cpu", "busy"), run(3, 30.0, "load_cpu")]
    (cell,) = cell_host_metrics(noisy)
    assert cell["threads"] == 4 and cell["runs"] == 3
    assert cell["server"]["busy_pct"] == 30.0  # the median: one noisy repeat does not move it
    assert cell["server"]["cpu_us_per_tx"] == 90.0
    assert cell["load"]["busy_pct"] == 99.0
    assert cell["bottleneck"] == "load_cpu" and cell["client_bound"] is True
    assert cell["busy_start"] == 1


def test_the_devices_time_per_flush_is_weighted_by_the_flushes():
    fast = {"vda": {"w_iops": 1.0, "flush_s": 3000.0, "flush_ms": 0.03}}
    slow = {"vda": {"w_iops": 1.0, "flush_s": 1000.0, "flush_ms": 0.07}}
    series = HostSeries("server", "db", [(1.0, {"disks": fast}), (2.0, {"disks": slow})])
    (host,) = host_summary([series], warmup_s=0.0, tps=None)["hosts"]
    assert host["flush_s"] == 2000.0
    assert host["flush_ms"] == 0.04  # (3000 x 0.03 + 1000 x 0.07) / 4000
    recorded = HostSeries("server", "db", rows(20.0))
    assert host_summary([recorded], warmup_s=1.0, tps=1.0)["hosts"][0]["flush_ms"] == 0.0347
