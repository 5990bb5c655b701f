"""The redo log's fsyncs on MariaDB 10.11, whose performance_schema has no redo-log row:
counted, timed by the host's /proc/diskstats as a lower bound, never by the data files'
timer; checked against strace on mariadbd, the independent measurement."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from runs import targets
from runs.analysis.host_metrics import procfs
from runs.analysis.why.fsyncs import DISKSTATS, REDO, HostSync, run_fsyncs
from runs.columns import RunCounters
from runs.sysbench.command import Connection
from runs.targets.counters import counters_summary

pytestmark = pytest.mark.timeout(300)
CALL = re.compile(r"(fsync|fdatasync)\((\d+).*<([\d.]+)>")


def _diskstats() -> procfs.ProcSnapshot:
    snapshot = procfs.ProcSnapshot(uptime_s=float(Path("/proc/uptime").read_text().split()[0]))
    for line in Path("/proc/diskstats").read_text().splitlines():
        procfs._diskstats(snapshot, line)
    return snapshot


def test_the_redo_logs_fsyncs_are_counted_and_bounded_by_the_device(mariadb_ps_server, tmp_path):
    server = mariadb_ps_server
    database = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    connection = Connection(
        engine="mariadb", host=server.host, port=server.port, socket="", database=database,
        user=server.user, password=server.password,
    )  # fmt: skip
    sysbench = [
        "sysbench", "oltp_insert", "--db-driver=mysql", "--mysql-host=127.0.0.1",
        f"--mysql-port={server.port}", "--mysql-user=bench",
        f"--mysql-password={server.password}", f"--mysql-db={database}", "--tables=1",
        "--table-size=100",
    ]  # fmt: skip
    subprocess.run([*sysbench, "prepare"], check=True, capture_output=True, timeout=60)
    pid = int((server.dir / "mariadb.pid").read_text())
    trace = tmp_path / "strace.txt"
    with targets.connect(connection) as db:
        db.apply({"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "0"})
        tracer = subprocess.Popen(
            ["strace", "-f", "-T", "-e", "trace=fsync,fdatasync", "-p", str(pid), "-o", str(trace)],
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(1.0)  # attached to every thread
        before, disks_before, started = db.status_counters(), _diskstats(), time.monotonic()
        subprocess.run(
            [*sysbench, "--threads=1", "--time=3", "--rate=300", "run"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        after, disks_after = db.status_counters(), _diskstats()
        tracer.terminate()
        tracer.wait(timeout=30)
    inserts = after["Com_insert"] - before["Com_insert"]
    readings = [(0.0, before), (time.monotonic() - started, after)]
    counters = RunCounters.load(counters_summary(readings, [{"sql": {"transactions": inserts}}]))
    disks = procfs.host_values(disks_before, disks_after) or {}
    flushes = [d for d in disks.get("disks", {}).values() if d.get("flush_s")]
    flush_ms = max((d["flush_ms"] for d in flushes), default=None)

    host = HostSync(flush_ms, DISKSTATS, True) if flush_ms else None
    redo = run_fsyncs(counters, host).get(REDO)

    assert "pfs_log_file_syncs" not in counters.deltas  # no redo-log row on MariaDB 10.8+
    calls: dict[str, list[float]] = defaultdict(list)
    for line in trace.read_text().splitlines():
        if match := CALL.search(line):
            calls[match.group(2)].append(float(match.group(3)) * 1000)
    names = {fd: Path(f"/proc/{pid}/fd/{fd}").resolve().name for fd in calls}
    log = [ms for fd, times in calls.items() if names[fd].startswith("ib_logfile") for ms in times]
    assert log, names
    assert redo.per_tx is not None
    assert redo.per_tx == pytest.approx(len(log) / inserts, rel=0.1)  # counted right
    if flush_ms is None:  # a kernel before 5.5: nothing times the redo log here
        assert redo.ms is None
        return
    assert redo.source == DISKSTATS and redo.lower_bound
    # the device's part of an fsync is at most the fsync's whole time, as strace saw it
    assert redo.ms is not None and redo.ms <= sum(log) / len(log)
