"""Imports: a sysbench log written elsewhere, imported as a batch of its own.

    importer.py        the log read and stored as one run: its parameters from the header
                       and command line, its samples, summary, reports and raw log
    store.py           the import's bounded-memory reading (its size checked as it is
                       read) and its COPY writes

A log's path: the page, the API or `manage.py import_log` hands the log to
`importer.log_import`, which reads it line by line through `store` (the parser of
runs/sysbench/ places each line), writes its samples with COPY as they come, and stores
the run's summary and the batch's results at the end, in one transaction.
"""
