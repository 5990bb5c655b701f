"""Scheduled nights, for scripts: each night's regression verdict, the alerts it raised
and the re-run that confirmed them, and the notes people left (runs/services/nightly/).

    history.py  a plan's nights and their verdicts
    alerts.py   alerted nights, the re-run's verdict and what changed; dismiss, confirm
    notes.py    notes and tags on batches, annotations on a plan's history
"""
