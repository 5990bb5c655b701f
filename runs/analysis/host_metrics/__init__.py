"""Host metrics: what the machines did during a run (the load host, the server's host),
and what limited the run. Pure: no Django, no I/O.

    procfs.py          a machine's /proc snapshots parsed, and the rates between two of them
    host_summary.py    a run's host metrics summed up over its steady state (host_summary),
                       and a cell's from its runs' for the results
    bottleneck.py      what limited a run, with its evidence, from its host summary
    disturbed.py       a repeat markedly slower than its cell's others while other
                       processes took the CPU, and the verdict that rests on it
    sync_probe.py      the sync probe's lines summed up: the median time of an fsync on
                       the server's log file system over the measured interval, its
                       interval and its own cost; where the server's log is (SyncSite)

The path of a reading: the sampler on each host prints its /proc files on sysbench's
clock, parsed as they come (`procfs.snapshot_parse`; this machine's are read straight
into a snapshot: runs/loadhosts/procstream.py, procfiles.py); runs/execution/host_metrics.py
stores the rates between two (`procfs.host_values`) as a
HostMetrics row; at the run's end `host_summary.host_summary` sums the rows up into
Run.host_summary, and `bottleneck.bottleneck_classify` names what limited the run
(Run.bottleneck). Beside the /proc sampler, the sync probe (runs/loadhosts/sync_probe.py)
times fsyncs on the server host; `sync_probe.probe_summary` sums its samples up into the
server host's `sync_probe`, which times the classes of fsync the server does not
(runs/analysis/why/fsyncs.py). The results read them back per cell
(`host_summary.cell_host_metrics`).
"""
