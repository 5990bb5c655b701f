"""A running sysbench followed, from its first line to its exit: each line parsed, sent
live and stored; the worker's loop between two lines; a cancel heard at once.

    sysbench_process.py  starting sysbench on the load host and following it to its end
    heartbeat.py         the worker's loop between two lines (Pulse): the heartbeat, and
                         when a running benchmark must stop (Watch, BatchStopped)
    cancel.py            a cancel heard at once: published on Redis by the cancel, heard
                         by the worker while sysbench runs (the heartbeat is the fallback)
    sink.py              where a running cell's output goes: live at once, stored in bulk
    sample_writes.py     the heartbeat's one statement, COPY for a burst; Redis' leftovers
    live.py              live events of a run over Redis, for the pages' Server-Sent Events

One sample's path through them is told in runs/execution/__init__.py.
"""
