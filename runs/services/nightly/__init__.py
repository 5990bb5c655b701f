"""Nightly: a plan that launches on its own, each night checked against the nights before
it, an alert confirmed by a re-run, and the news told by email and webhook. The
arithmetic is runs/analysis/nightly/'s; the pages are the plan's history and schedules.

    schedules.py       plans that launch on their own (django-celery-beat), and a launch
                       beat asked for that could not run, recorded as a lost night
    nights.py          each batch's cells as the check and the history read them, stored
                       as the batch ends (Batch.night)
    check.py           the nightly check: a scheduled batch's cells against the plan's
                       previous nights, its verdict stored in Batch.analysis
    history.py         the history of a plan's nights, a page at a time, with each cell's
                       steps and verdicts
    alerts.py          a night alerted: confirmed by a re-run or noise, then decided
    confirming.py      a re-run under way: when its answer is due, what it waits for now
    notifications.py   news of a night by email and webhook
    webhooks.py        posting to a plan's webhook, to public addresses only
    webhook_bodies.py  the news as plain JSON, a Slack message or a Teams Adaptive Card

A night's path: beat launches the plan (`schedules.plan_launch_scheduled`); as its batch
ends, `check.batch_finished` stores its night (`nights.batch_night_store`) and queues the
check; `check.batch_analyse` judges it and tells of a lost night
(`notifications.batch_notify`); an alerted night opens an Alert and a re-run
(`alerts.confirmation_launch`), whose end confirms or dismisses it
(`alerts.confirmation_finished`) before anyone is told. `history.plan_history` reads the
stored nights and verdicts for the page and the API.
"""
