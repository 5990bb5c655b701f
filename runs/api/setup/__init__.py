"""What a batch is made from, for scripts: the servers under test, the machines that run
sysbench, custom Lua scripts, and the plans that launch batches.

    targets.py    targets: list, create, read, update, delete (the password write-only)
    loadhosts.py  load hosts, and pinning an SSH host's key
    scripts.py    custom Lua scripts and bundles, their versions
    plans.py      plans, their preflight, launch and schedules
    plan_servers.py  a plan's servers axis, one object: targets, installs, configs
"""
