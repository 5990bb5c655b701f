"""The host metrics' /proc parsing and rates, on /proc files captured on this machine a
second apart (tests/fixtures/proc/: a MariaDB server with its threads, a PostgreSQL
postmaster with its backends, the SSH loop's trimmed snapshots), and on edited copies
for the edge cases: a core offline, a disk appearing, a counter that wrapped at 2**32."""

from __future__ import annotations

from pathlib import Path

from runs.analysis.host_metrics import procfs

PROC = Path(__file__).resolve().parents[2] / "fixtures" / "proc"


def snapshot(name: str) -> procfs.ProcSnapshot:
    return procfs.snapshot_parse((PROC / f"{name}.txt").read_text())


def values(before: str, after: str) -> dict:
    result = procfs.host_values(snapshot(before), snapshot(after), clk_tck=100)
    assert result is not None
    return result


def test_it_reads_the_machines_counters():
    s = snapshot("mariadb-1")
    assert s.uptime_s == 2272.56
    assert set(s.cpus) == {"cpu", "cpu0", "cpu1"}
    assert s.cpus["cpu"][:4] == [142073, 1579, 46776, 245536]
    assert s.ctxt > 0 and s.intr == 7121332
    assert s.meminfo_kb["MemTotal"] > 0
    assert "vda" in s.disks
    assert not any(name.startswith(("loop", "zram")) for name in s.disks)
    assert {"lo", "eth0"} <= set(s.nets)


def test_it_sums_the_database_process_over_its_threads():
    s = snapshot("mariadb-1")
    assert list(s.processes) == [3787]
    utime, stime, voluntary, _involuntary = s.processes[3787]
    assert (utime, stime) == (14, 17)
    assert voluntary > 9  # nine threads, each one at least once


def test_it_takes_the_postmaster_and_its_backends():
    s = snapshot("postgres-1")
    assert len(s.processes) == 6


def test_rates_over_one_second():
    v = values("mariadb-1", "mariadb-2")
    assert v["ncpu"] == 2
    assert len(v["cores"]) == 2
    cpu = v["cpu"]
    assert abs(sum(cpu.values()) - 100) < 0.5
    assert set(cpu) == {"user", "system", "iowait", "steal", "idle"}
    assert v["ctxt_s"] > 0 and v["intr_s"] > 0
    assert set(v["disks"]) == {"vda"}
    assert set(v["disks"]["vda"]) == {
        *("r_iops", "w_iops", "r_mbs", "w_mbs", "await_ms", "util_pct"),
        *("flush_s", "flush_ms"),  # kernels 5.5 and later: the recorded machine's 6.x
    }
    assert "lo" in v["nets"]  # everything here goes through the loopback interface
    assert v["mem"]["used_mb"] > 0 and v["mem"]["cached_mb"] > 0
    db = v["db"]
    assert set(db) == {"user_cores", "system_cores", "vcsw_s", "nvcsw_s"}
    assert db["vcsw_s"] >= 0


def test_a_host_without_the_database_process_has_no_db_figures():
    before, after = snapshot("mariadb-1"), snapshot("mariadb-2")
    before.processes, after.processes = {}, {}
    v = procfs.host_values(before, after)
    assert v is not None and "db" not in v


def test_a_core_offline_is_none_and_not_counted():
    v = values("mariadb-1", "core-offline-2")
    assert v["ncpu"] == 1
    assert len(v["cores"]) == 1


def test_a_disk_that_appears_waits_for_its_second_reading():
    v = values("mariadb-1", "disk-appears-2")
    assert "sdb" not in v["disks"]
    again = procfs.host_values(snapshot("disk-appears-2"), snapshot("disk-appears-2"))
    assert again is None  # no time passed: nothing to say


def test_a_counter_that_wrapped_at_32_bits_counts_on():
    v = values("wrap-1", "wrap-2")
    seconds = snapshot("wrap-2").uptime_s - snapshot("wrap-1").uptime_s
    assert v["ctxt_s"] == round((2**32 - 4294967000 + 704) / seconds, 1)


def test_busy_is_what_is_neither_idle_nor_iowait():
    v = values("mariadb-1", "mariadb-2")
    assert procfs.busy_pct(v) == round(100 - v["cpu"]["idle"] - v["cpu"]["iowait"], 1)


def test_intervals_of_consecutive_snapshots():
    out = procfs.intervals([snapshot("mariadb-1"), snapshot("mariadb-2")])
    assert len(out) == 1


def test_the_remote_loops_trimmed_snapshot_gives_every_figure():
    # Printed by the SSH loop (procstream.PROC_LOOP) a second apart: only the lines that
    # are read; a server process with two threads besides its main one.
    v = values("remote-1", "remote-2")
    full = values("mariadb-1", "mariadb-2")
    assert set(v) == set(full)
    assert set(v["cpu"]) == set(full["cpu"]) and len(v["cores"]) == 2
    assert v["intr_s"] > 0 and v["ctxt_s"] > 0 and v["runq"] >= 1
    assert set(v["mem"]) == set(full["mem"]) and v["mem"]["used_mb"] > 0
    assert "vda" in v["disks"] and "lo" in v["nets"]
    (pid,) = snapshot("remote-2").processes
    assert len(snapshot("remote-2").processes[pid]) == 4
    assert set(v["db"]) == set(full["db"])


def test_the_disks_cache_flushes_and_the_devices_time_per_flush():
    # Recorded during a single-thread insert under flush=1 on MariaDB 10.11 (kernel 6.x):
    # 4,674 flushes in 1.01 s, 162 ms spent flushing.
    vda = values("mariadb-1", "mariadb-2")["disks"]["vda"]
    assert vda["flush_s"] == round(4674 / 1.01, 1)
    assert vda["flush_ms"] == round(162 / 4674, 4)


def test_a_kernel_before_5_5_has_no_flush_figures():
    line = (
        " 254       0 vda 125275 12867 7381698 75478 3258162 200302 44307744 283574 0 130260 399053"
    )
    before, after = procfs.ProcSnapshot(uptime_s=1.0), procfs.ProcSnapshot(uptime_s=2.0)
    procfs._diskstats(before, line)
    procfs._diskstats(after, line.replace("3258162", "3258262"))
    figures = procfs._disk(before.disks["vda"], after.disks["vda"], 1.0)
    assert figures is not None and figures["w_iops"] == 100.0
    assert "flush_s" not in figures and "flush_ms" not in figures


def sections(text: str) -> dict[str, str]:
    """A captured snapshot's machine files, each as its own text (`==> path <==` sections)."""
    files: dict[str, str] = {}
    for part in text.split("==> ")[1:]:
        header, _, body = part.partition(" <==\n")
        files[header] = body.split("\n/proc/")[0]  # the process lines follow the last file
    return files


def test_the_files_read_one_by_one_give_the_snapshot_their_text_gives():
    """This machine's reader parses each file as it reads it (file_parse, process_parse):
    the same counters as the text the remote loop writes, parsed whole."""
    for name in ("mariadb-1", "postgres-2", "remote-1"):
        text = (PROC / f"{name}.txt").read_text()
        whole = procfs.snapshot_parse(text)
        by_file = procfs.ProcSnapshot(uptime_s=whole.uptime_s)
        for path, body in sections(text).items():
            if path != "/proc/uptime":
                procfs.file_parse(by_file, path, body)
        for pid, (utime, stime, voluntary, involuntary) in whole.processes.items():
            stat = f"{pid} (server) S " + " ".join(["0"] * 10) + f" {utime} {stime} 0 0"
            procfs.process_parse(by_file, pid, stat, (voluntary, involuntary))
        assert by_file == whole, name
        assert whole.cpus and whole.meminfo_kb and whole.disks and whole.nets, name
