"""Where a server keeps its redo log or WAL and how it writes it, read from the server, for
the sync probe (runs/loadhosts/sync_probe.py) that times fsyncs on that file system.

- MariaDB/MySQL: `datadir`, the redo log's `innodb_log_group_home_dir` (relative to the
  data directory when not absolute); O_DIRECT when `innodb_log_file_buffering` is OFF
  (MariaDB 10.8+, its default where the file system allows it: "File system buffers for
  log disabled" in its error log), buffered otherwise; 4 KiB blocks.
- PostgreSQL: `data_directory` and its `pg_wal` (a superuser or pg_read_all_settings may
  read it, as for the pid file); buffered writes of `wal_block_size`.
"""

from __future__ import annotations

import posixpath

from runs.analysis.host_metrics.sync_probe import SyncSite
from runs.targets.base import ServerTarget, TargetError

INNODB_BLOCK = 4096
NAMES = (
    "datadir",
    "innodb_log_group_home_dir",
    "innodb_log_file_buffering",
    "data_directory",
    "wal_block_size",
)


def sync_site(db: ServerTarget) -> tuple[SyncSite | None, str]:
    """The server's log site, or why it is unknown."""
    try:
        values = db.read(NAMES)
    except TargetError as e:
        return None, f"the server's log directory is unknown: {e.message}"
    if values.get("data_directory"):
        data = values["data_directory"]
        block = values.get("wal_block_size", "")
        return SyncSite(f"{data}/pg_wal", data, int(block) if block.isdigit() else 8192), ""
    if values.get("datadir"):
        data = values["datadir"].rstrip("/") or "/"
        home = values.get("innodb_log_group_home_dir") or "."
        log_dir = posixpath.normpath(posixpath.join(data, home))
        direct = values.get("innodb_log_file_buffering", "").upper() == "OFF"
        return SyncSite(log_dir, data, INNODB_BLOCK, direct), ""
    return None, (
        "the server does not say where its log is (PostgreSQL: data_directory needs a "
        "superuser or pg_read_all_settings)"
    )
