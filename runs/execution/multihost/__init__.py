"""A cell driven from several load hosts at once (docs/multihost.md), on the worker's side.

    cell_hosts.py     the runner's side: one driver per host started, their samples summed
                      tick by tick into the cell's own
    host_driver.py    one load host's part of such a cell (a Celery task per host): waits
                      at the barrier, starts sysbench, sends its lines
    barrier.py        where the runner and the hosts' drivers meet, in Redis

The path of a sample: each `host_driver.host_drive` sends its host's samples through Redis
(barrier.py), and `cell_hosts` sums them into the cell's samples before the runner's sink.
"""
