"""sysbench itself, as pure code: what it accepts, how it is called, what it prints.

Pure: no Django, no I/O, nothing of runs but each other and runs/errors.py.

    options.py         the tests and options benchdash accepts, their kinds, ranges and
                       defaults (nothing unlisted reaches a command line)
    values.py          an option's value checked and made canonical, as sysbench reads it
    matrix.py          a plan's matrix over that table: its axes expanded into the ordered
                       cells of a batch (runs/services/plans.py checks a plan with it)
    cells.py           the axes and one cell, and where a batch's servers need a prepare,
                       a cleanup or a restart
    suites.py          a tests axis as the editor writes it, and the built-in
                       microbenchmark suite (point, range, range with aggregation, writes)
    command.py         the command lines built, and which runs can share a data set
    script_command.py  the command line of a custom script with its own options and commands
    script_options.py  a custom script's interface: its options and commands, as sysbench
                       prints them, and a plan's values for them checked by kind
    bundles.py         Lua bundles: files or a tar.gz/zip archive read, hostile ones refused
    statements.py      how many prepared statements a test holds on the server
    parser.py          the streaming parser of sysbench's output
    intervals.py       how its interval lines read, in 1.0 (C and Lua) and 0.5
    report_hooks.py    the CSV and JSON interval reports of a script's report hook
    lua_reports.py     a final or checkpoint report a script's Lua hook prints as one line
    output.py          what it printed, parsed: samples, queue samples, reports, outcome
    errors.py          its error lines as a stable kind, the server's code and a hint
    commandline.py     command lines copied into old logs, read and their passwords masked
"""
