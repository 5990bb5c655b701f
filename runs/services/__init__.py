"""What users ask benchdash for: the business rules, called by the pages, the API, the
tasks and the admin, and calling execution, targets and load hosts below.

Writes (services named <entity>_<action>, keyword-only):

    definitions.py     targets, load hosts and plans, checked before they are stored
    plans.py           what a plan would run, checked completely before anything runs, and
                       its preflight on demand
    plan_axes.py       a plan's targets, tests and server axes, as it is or being edited
    restarts.py        a target's restart opt-in and a plan's restart axes checked; the
                       number of restarts a plan makes and their estimated time
    loadhosts.py       a load host's key scanned and pinned, its facts read again
    batches.py         launching a plan, running a batch on a worker, cancelling one
    queue.py           handing work to the workers
    recovery.py        the sweeper: batches of crashed workers resumed or ended
    worker_watch.py    beat's watch: a worker dead mid-batch found in seconds, its batch
                       recovered at once
    put_back.py        what a batch left on a server away at its end (settings, data set)
                       put back once it answers, by the sweeper or the next batch's worker
    notes.py           notes and tags on batches, annotations on a plan's history
    nightly/           a plan that launches on its own: its schedule, each night checked,
                       alerts confirmed by a re-run, the news by email and webhook (its own map)
    imports/           a sysbench log written elsewhere, imported as a batch (its own map)
    scripts/           custom Lua scripts and bundles, and a plan's custom script checked
                       (its own map)
    tokens.py          API tokens for scripts

Reads:

    selectors.py       the queries pages and the API need, each in one place
    run_selectors.py   the reads of one run: its environment (its own target's), facts, samples
    live_page.py       a batch's live page by pages of runs, its grid counted by cell
    permissions.py     who may do what: the one place pages and API ask
    health.py          the installation's health: heartbeats, servers reachable, the queue
    verified_tokens.py tokens and sessions verified lately, in Redis, for health while the
                       results database is down
    answers/           a batch's answers: results built once and stored, the relative
                       table, compare, the report, exports, chart series (its own map)
    links.py           links that leave benchdash (mails, webhooks, the report): one
                       base URL, BENCHDASH_BASE_URL

A batch's life: `batches.batch_launch` freezes the plan (runs/frozen.py) and hands the
batch to a worker (queue.py); the worker's task calls `batches.batch_execute`, which runs it
(runs/execution/); as it ends, `answers.stored_results.batch_results_store` stores what it
says (built by `answers.results.batch_results`), which the pages, the API and the report then serve.
"""
