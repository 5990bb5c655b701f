"""Running one batch on a worker: from the claim to the restored settings.

The modules, in the order a batch meets them (a plan is checked before, above the worker:
runs/services/plans.py):

    preflight/           what would break a batch, found before anything runs (its own map)
    worker_limits.py     the benchmarks workers' open-file limits, reported at their start
    liveness.py          the heartbeats of the workers, beat and the sweeper, in Redis
    locks.py             claiming a batch; one benchmark per server and per load host at a time
    runner.py            executing a batch: groups, stages, settings, the end (the entry)
    cell_run.py          running one cell: its settings, sysbench followed, its result stored
    environment.py       the environment recorded before the first change; settings put back
    server_targets.py    a servers axis's targets: each run's own target, every further
                         target's server recorded, its settings kept and put back
                         (Batch.put_back)
    datasets.py          reusing a data set left on the target: its marker, its shape
    groups.py            the runs sharing a data set (a group) and the records of their
                         prepare and cleanup stages
    group_run.py         the runner's data-set half: each group's servers, its prepare,
                         check and cleanup on each, and what a failure means next
    host_metrics.py      what the machines did during a cell: /proc on sysbench's clock, the
                         quiet-host wait, the run's host summary and bottleneck at its end
    sync_probe.py        the server's facts for them (pid file, where its log is) and the
                         sync probe on the server host, summed up over the measured interval
    stream/              sysbench followed from its first line to its exit: each line
                         parsed, sent live and stored; the heartbeat; a cancel heard at
                         once (its own map)
    row_counts.py        a writing run's tables counted before and after it; the warning
                         when it changed their rows by more than 1 %
    run_results.py       what a run ends with: its result or its failure, stored and announced
    outages/             a machine away while a batch runs: the results database's writes
                         held, a handover to the sweeper, a target or a load host waited
                         for (its own map)
    multihost/           a cell from several load hosts at once (its own map)
    restarts/            restart-only settings, configs and installs as axes on a target
                         that opted in: restarted, verified, put back (its own map)
    auto.py              the auto modes (runs/analysis/auto/): the runs they add once the
                         queued ones have run

One sample, from sysbench's line to the browser and the database:

1. sysbench prints `[ 3s ] thds: 4 tps: 812.33 qps: ...` on the load host; the executor
   (runs/loadhosts/) hands the worker the lines read so far (`SysbenchProcess.read`).
2. `stream.sysbench_process.follow_run` feeds each line to the parser (runs/sysbench/parser.py),
   which yields an `IntervalSample`; `SampleSink.add` (stream/sink.py) turns it into a
   `LiveSample` with its sequence number.
3. At once, `SampleSink.publish` sends the batch of lines and its samples to Redis in one
   write (`stream.live.publish`): each sample pushed to the run's short recent list, then
   published on the run's channel. The page's Server-Sent Events (runs/web/events.py,
   /runs/<id>/events) subscribe, replay the stored samples and the recent list, and
   follow the channel; the browser draws it (static/js/).
4. On the heartbeat (`stream.heartbeat.Pulse.tick`, every BENCHDASH_HEARTBEAT_SECONDS),
   `SampleSink.flush` stores what it holds: samples, counter readings, raw log and the
   batch's heartbeat in one statement (`stream.sample_writes.run_write`), or by COPY for a burst;
   `outages.outage_buffer.OutageBuffer` retries while the results database is away.
5. When sysbench ends, `run_results.run_set_result` puts the run's summary, parsed from
   the final report (runs/analysis/summary.py), on the run; the runner stores it with the
   last samples and announces the run's status live (`stream.live.publish_status`).

A cell from several load hosts takes the same path with one step more: each
`multihost.host_driver.host_drive` sends its host's samples through Redis
(multihost/barrier.py), and `multihost.cell_hosts` sums them tick by tick into the
cell's samples before step 2's sink.
"""
