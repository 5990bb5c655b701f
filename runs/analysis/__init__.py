"""The arithmetic of benchdash's answers: pure functions over what runs measured.

Pure: no Django, no I/O, nothing of runs but each other, runs/errors.py and the typed
columns (runs/frozen.py, runs/columns.py). Everything here is tested on recorded runs.

    summary.py         one run's summary, from what sysbench printed
    run_facts.py       everything sysbench printed for one run, as the pages say it: outcome,
                       rates, latency, fairness, errors by code, histogram, its raw log
    axes.py            a run's axis values from its cell's key: options, and its target
    results.py         a batch's runs as figures, each with its series' key and label
    series.py          the runs grouped into series in the plan's order: points, peaks
    report_table.py    the report table: cells side by side per thread count, and as TSV
    percent.py         a change in percent as every sentence prints it (signed_pct)
    batch_results.py   a batch's results, the one structure every page renders
    pairs.py           which series a batch sets against which (the baseline, pairs beside
                       it), their verdicts cell by cell as one family, in sentences
    charts.py          the shapes of the charts: scaling, time series, latency, timeline
    grid.py            the live page's grid of a batch: each cell's runs counted by status
    comparison.py      two batches or two runs side by side, cell by cell
    relative.py        the relative table: per test (by family) or cell, throughput against
                       the first of the compared values (servers, a setting, threads...),
                       its interval and verdict, and the cost per transaction
    moves.py           how a family of the relative table moved in one column: faster,
                       slower, the same, or not tested (too few repeats)
    multihost.py       one cell from several load hosts: the split, and the merged output
    row_counts.py      whether a writing run left its tables the size it found them: the
                       counts' record and the warning past 1 %
    tpcc.py            a TPC-C run as a team reads it: tpmC beside tps (where the script
                       prints its NewOrders), the mix, ignored errors/s, the warehouses
    noise/             is a difference real or noise: spread, verdicts, power, many cells
                       at once (its own map)
    why/               the why panel: the per-transaction time model, fsyncs by file
                       class, the budget, the server's waits (its own map)
    host_metrics/      what the machines did during a run, and what limited it (its own map)
    auto/              the automatic modes of a plan's `auto` field (its own map)
    nightly/           whether a night got slower: the rule, change points, the check, the
                       confirmation of an alert, what changed (its own map)

A run's figures travel: the stored Run (summary, samples, counters) is read once as a
`results.RunFigures`; `series.group_series` groups the figures into series of cells;
`pairs.batch_verdicts` judges each cell against the baseline's; `batch_results.build`
puts the sentences, verdicts, peaks, why, charts and table into one `BatchResults`,
which runs/services/answers/results.py hands to the results page, the report and the API.
"""
