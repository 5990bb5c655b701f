"""The database server's own storage I/O (/proc/<pid>/io) in the host metrics: parsed from
two real captures a second apart (tests/fixtures/proc/dd-io-*.txt: a `dd oflag=direct`
writing about 240 MB/s, read as root, uptimes 536.98 and 537.99), in both forms a
snapshot takes (the local reader's file, the remote loop's `grep -H`-like lines); summed up
per transaction only when every second has it; a refusal said, never a figure; and the
relative table's read and write KB from the server's own processes when every repeat of
a cell has them, else from the machine's disks, saying which (issue 48)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.analysis.host_metrics import procfs
from runs.analysis.host_metrics.host_summary import (
    MACHINE_DISKS,
    SERVER_PROCESS_IO,
    HostSeries,
    cell_per_query,
    cell_per_tx,
    host_summary,
)
from runs.analysis.results import RunFigures

PROC = Path(__file__).resolve().parents[2] / "fixtures" / "proc"
PID = 11886
UPTIMES = (536.98, 537.99)
STAT = f"{PID} (dd) R 1 2 3 4 5 6 7 8 9 10 100 200 0 0 20 0 1 0 5 6 7"


def io_text(i: int) -> str:
    return (PROC / f"dd-io-{i}.txt").read_text()


def local(i: int) -> procfs.ProcSnapshot:
    """As runs/loadhosts/procfiles.py fills it: the files' text through the readers."""
    snapshot = procfs.ProcSnapshot(uptime_s=UPTIMES[i - 1])
    procfs.process_parse(snapshot, PID, STAT, (10, 2))
    procfs.io_parse(snapshot, PID, io_text(i))
    return snapshot


def remote(i: int) -> procfs.ProcSnapshot:
    """As the SSH loop prints it: each kept line after its file's path."""
    kept = [f"/proc/{PID}/io:{line}" for line in io_text(i).splitlines()
            if line.startswith(("read_bytes:", "write_bytes:"))]  # fmt: skip
    text = "\n".join(
        [f"==> /proc/uptime <==\n{UPTIMES[i - 1]} 1.0", f"/proc/{PID}/stat:{STAT}", *kept]
    )
    return procfs.snapshot_parse(text)


def test_read_bytes_and_write_bytes_not_rchar_wchar():
    for read in (local, remote):
        assert read(1).process_io == {PID: [0, 82837504]}
        assert read(2).process_io == {PID: [8192, 325066752]}  # rchar was 325065536


def test_the_servers_own_kb_a_second():
    for read in (local, remote):
        values = procfs.host_values(read(1), read(2))
        assert values is not None
        db = values["db"]
        assert db["write_kbs"] == round((325066752 - 82837504) / 1.01 / 1000, 2)
        assert db["read_kbs"] == round(8192 / 1.01 / 1000, 2)
        assert "io_why" not in db


def test_a_refused_io_file_is_said_and_gives_no_figure():
    before, after = local(1), local(2)
    for snapshot in (before, after):
        snapshot.process_io = {}
        snapshot.io_problem = f"cannot read /proc/{PID}/io: Permission denied"
    values = procfs.host_values(before, after)
    assert values is not None
    assert values["db"]["io_why"] == f"cannot read /proc/{PID}/io: Permission denied"
    assert "write_kbs" not in values["db"] and "read_kbs" not in values["db"]


def second(disk_w_mbs: float, **db: object) -> dict:
    """One second's values: the machine's one disk, and the server process."""
    return {"disks": {"vda": {"r_mbs": 0.1, "w_mbs": disk_w_mbs}},
            "db": {"user_cores": 0.5, "system_cores": 0.1, "vcsw_s": 10.0, "nvcsw_s": 1.0,
                   **db}}  # fmt: skip


def server_summary(rows: list[dict]) -> dict:
    series = HostSeries("server", "db", [(float(i + 1), v) for i, v in enumerate(rows)])
    return host_summary([series], warmup_s=0.0, tps=100.0)


def test_per_transaction_from_the_server_when_every_second_has_it():
    own = server_summary([second(9.0, read_kbs=50.0, write_kbs=400.0)] * 3)
    (host,) = own["hosts"]
    # the disks carried a neighbour's writes too: 90 KB a transaction, the server's own 4
    assert host["write_kb_per_tx"] == 90.0
    assert host["db"]["write_kb_per_tx"] == 4.0 and host["db"]["read_kb_per_tx"] == 0.5
    partial = server_summary([second(9.0, read_kbs=50.0, write_kbs=400.0), second(9.0)])
    (host,) = partial["hosts"]
    assert "write_kb_per_tx" not in host["db"]
    assert host["db"]["io_why"] == "/proc/<pid>/io read in 1 of 2 seconds"
    refused = server_summary([second(9.0, io_why="cannot read /proc/9/io: Permission denied")])
    assert refused["hosts"][0]["db"]["io_why"] == "cannot read /proc/9/io: Permission denied"


def run(summary: dict, qps: float = 1600.0) -> RunFigures:
    return RunFigures(
        id=1, position=0, round=0, threads=1, settings={}, axis_options={}, status="done",
        summary={"tps": 100.0, "qps": qps}, host_summary=summary,
    )  # fmt: skip


def test_a_cell_uses_the_servers_own_io_when_every_repeat_has_it():
    own = server_summary([second(9.0, read_kbs=50.0, write_kbs=400.0)])
    cell = [run(own), run(own)]
    per_tx, per_query = cell_per_tx(cell), cell_per_query(cell)
    assert (per_tx.write_kb, per_tx.read_kb, per_tx.io_source) == (4.0, 0.5, SERVER_PROCESS_IO)
    # per query: each repeat's per transaction over its 16 queries a transaction
    assert (per_query.write_kb, per_query.io_source) == (0.25, SERVER_PROCESS_IO)
    assert per_tx.to_dict()["io_source"] == SERVER_PROCESS_IO


def test_a_cell_with_one_repeat_unread_falls_back_to_the_disks_whole_and_says_why():
    own = server_summary([second(9.0, read_kbs=50.0, write_kbs=400.0)])
    refused = server_summary([second(9.0, io_why="cannot read /proc/9/io: Permission denied")])
    per_tx = cell_per_tx([run(own), run(refused)])
    assert per_tx.io_source == MACHINE_DISKS
    assert per_tx.write_kb == 90.0  # both repeats' disks, never one of each
    assert per_tx.io_why == "cannot read /proc/9/io: Permission denied"
    assert cell_per_query([run(own), run(refused)]).write_kb == pytest.approx(90.0 / 16)
    assert cell_per_tx([]).io_source is None
