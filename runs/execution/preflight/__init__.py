"""Preflight: what would break a batch, found before anything runs, each check naming the
host it ran against and what to do when it fails.

    batch.py           the checks in their order (run_preflight), the load hosts' own
                       (SSH, sysbench, open files, disk), and a batch's first check
    target.py          the target: logins from the load host, its server's limits, fsync
                       timing, its own SSH host
    limits.py          the target's server against what the batch asks of it: connections,
                       ALTER SYSTEM, prepared statements, binary logging
    report.py          preflight's record of its checks, and the subject it checks

A preflight's path: a plan's (runs/services/plans.py, `plan_preflight`, when the editor
or the API asks) or a batch's (`batch.batch_preflight`, the runner's first act) becomes a
`report.Subject`; `batch.run_preflight` checks each load host and then the target
(`target.check_server` asks `limits` of the server), adding each check to a
`report.PreflightReport`. The worker asks `limits.server_warnings` again before it
changes a setting (runs/execution/environment.py).
"""
