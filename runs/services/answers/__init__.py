"""A batch's answers, read: its results built once and stored, the relative table, two
batches side by side, the offline report, exports and chart series.

    results.py         a batch's results, built once for the page, the report and the API
    stored_results.py  a finished batch's results, stored once and served as stored (ETag)
    stored_header.py   a batch's header with its stored answer, read in one statement
    held.py            the stored answers a process read last, held decoded in its memory
    relative.py        a batch's relative table: per test (by family) or cell, against the
                       first server, setting value or thread count; for the page, the
                       report, the API and CSV
    compare.py         batches and runs side by side
    reports.py         the results rendered as one offline HTML file
    tpcc.py            a TPC-C batch's figures per cell: tpmC (or why none), tps, ignored
                       errors/s and warehouses
    timeseries.py      samples as chart series, bucketed in PostgreSQL
    exports.py         CSV and JSON, streamed

As a batch ends, `stored_results.batch_results_store` stores what `results.batch_results`
built; the pages, the API and the report then serve it (`held.py` keeps the last read).
"""
