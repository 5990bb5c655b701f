"""Restarts: restart-only settings, config snippets and installs (versions) as axes, on a
target that opted in (`Target.restart_mode`: a managed instance benchdash starts and
stops itself, or a service with a restart command and an include benchdash owns).

    spec.py        the target's restart config and a restart's options, checked (pure):
                   no path, include or credential (runs/credentials.py) ever reaches a
                   server's config; a managed instance's options file, which includes
                   its install's config
    allowed.py     what the operator allowed (pure): restart commands as argv templates
                   whose placeholders a target fills with one word each, include folders,
                   install roots; a target's command, include and installs checked by them
    operator.py    the operator's settings read (BENCHDASH_RESTART_*), a target's restart
                   config checked against them, a service's include read and written only
                   inside the operator's folders, links resolved on the server's machine
    processes.py   the server processes on the database server's machine: a managed
                   instance stopped and started, its options in that file (0600, its
                   owner's), never on its command line; a service's error log read from
                   where a restart began, the server's own error line
    readback.py    a setting read back against the one asked for, and a put-back's
                   every setting against the server as found (pure)
    restarter.py   a batch's restarts before its cells, verified, rolled back when a
                   config does not start, the original put back at the end (and by the
                   sweeper after a crash, from Batch.put_back)
    original.py    the server as found before the first change: its install and own
                   command line (or a service's include), every setting; which did not
                   come back after the put-back
    hearing.py     how a restart's waits hear the batch: a cancel at once going forward,
                   deaf to it while putting the original back
    stages.py      what a restart says of itself: its label, its stage of the batch's log
    stage_log.py   a target's restart stages in Batch.stages: running from their start,
                   finished in their place
    batch_restarts.py  a batch's targets each with its restarts (a servers axis), chosen
                   by the run's target; every changed one put back at the end
    leftovers.py   for the sweeper: what a dead worker's batch, or a put-back that failed,
                   left changed on a server, put back from Batch.put_back
    rehearsal.py   what preflight checks of the restart path, changing nothing

Where: every file, process and command of a restart is on the server's machine, through
one `ServerShell` (runs/loadhosts/server_shell.py): the target's `server_host` over SSH
when it names one (pinned host key, argv words shlex-quoted, files over SFTP), else the
worker's own machine, which a target on another host without a server host never uses
(refused by name by preflight and by the worker).
"""
