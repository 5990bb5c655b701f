"""Nightly: whether a scheduled plan's night got slower than the nights before it, and
whether the re-run of its flagged cells agrees. Pure: no Django, no I/O.

    regressions.py     the rule: a night's cells (their figures), the band of the nights
                       before, the verdicts, a new slower step as the alert
    change_points.py   the nights a cell's figure stepped (Apache Otava's E-divisive)
    check.py           the nightly check: the rule applied night by night, knowing which
                       steps the previous check had seen
    confirmation.py    whether the re-run of a night's flagged cells agrees with its steps
    night_changes.py   what changed: a flagged night's environment against its baseline's

A night's path: runs/services/nightly/ reads each night's cells (`regressions.night_cells`,
stored per batch as it ends), `check.analyse` judges tonight's against the nights before
(the band, and the steps `change_points.find_steps` finds), and the verdict is stored in
Batch.analysis. An alerted night is re-run; `confirmation.confirm_cell` judges each
alerted step by where the re-run lands, and `night_changes.night_changes` lists what
differs from the baseline nights for the alert.
"""
