"""A machine away while a batch runs: the results database, the target, a load host.

    outage_buffer.py  the worker's writes held and tried again while the results database
                      is away
    handover.py       what a worker that gave up on the results database leaves in Redis,
                      for the sweeper to store and end the batch with
    target_wait.py    a target gone away is waited for; an error no retry cures stops
    host_wait.py      a load host gone away is waited for the same way; once back, what
                      the lost connection left there goes
    down_since.py     when a server was first seen away, in Redis, for the health answer

Each wait is bounded (BENCHDASH_TARGET_WAIT_S) and shown as what the batch waits for.
"""
