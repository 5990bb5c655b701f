"""The REST API, mounted at /api/v1/ (urls.py): thin views over the services, a module per
resource, grouped by the feature they serve as the services are. Each view checks its
input with a serializer, asks a service, and answers in JSON (or CSV where asked).

    urls.py         every route, and the schema and its interactive documentation
    common.py       what the API's modules share: query parameters, ownership, pages
    conventions.py  pagination and content negotiation as the schema says them
    errors.py       errors always in JSON: `{"field": ..., "message": ...}`
    health.py       the installation's processes, the servers it needs, its queue
    auth.py         knox's tokens, remembered so that health answers while the database
                    is down
    tokens.py       a user's API tokens: list, create (shown once), revoke
    batches.py      batches, listed, read, cancelled, and their runs listed
    runs.py         a run, its samples (JSON or CSV, ?after=) and its sysbench log
    imports.py      old sysbench logs imported as a batch
    setup/          what a batch is made from: targets, load hosts, scripts, plans
    answers/        what a batch found: its results, relative table, comparisons, host metrics
    nightly/        scheduled nights: the verdict history, alerts, notes and annotations
"""
