"""Why a cell's throughput is what it is: the why panel's arithmetic, from the server's
counters, its own accounting and its host's fsyncs. Pure: no Django, no I/O.

    panel.py           the why panel: the per-transaction time model from the server
                       counters, and what explains the difference between two cells
    fsyncs.py          fsyncs by file class, as the engine has and names them (redo log,
                       binary log, data files; PostgreSQL: WAL, data files): per transaction, and
                       the time of one from the first source the server in hand has (its
                       own timer, else the sync probe on its host, else the device's bound)
    direction.py       the prediction as an interval: each class timed once for both
                       cells of a pair, from one source; "cannot tell" when it holds 1x
    spread.py          how far a time the server did not take may be from its own: the
                       probe's error, the wait for a CPU on a crowded host
    budget.py          a cell's budget per transaction (CPU, off-CPU, switches, I/Os,
                       bytes, fsyncs) and what moved between two cells
    inside.py          inside the server over a run: its waits per transaction and its
                       statement digests, and what moved in the waits between two cells
    innodb.py          the SEMAPHORES section of SHOW ENGINE INNODB STATUS

`panel.side_figures` sums a cell's runs up: its time per transaction, its fsyncs by class
(fsyncs.py), its budget (budget.py) and the server's waits (inside.py); `panel.explain`
sets two cells side by side and says whether their fsyncs explain the difference.
"""
