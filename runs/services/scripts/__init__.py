"""Custom sysbench Lua scripts: stored with their versions for the users permitted, and
checked where a plan uses one.

    luascripts.py      custom Lua scripts and bundles, their versions, for permitted users
    plan_scripts.py    a plan's custom script checked: its options, commands and host
"""
