"""What a batch found, for scripts: the same answers the results and compare pages show
(runs/services/answers/).

    results.py       a batch's results: summary, verdicts, why, runs; and its report
    relative.py      a batch's relative table (JSON, or CSV)
    compare.py       batches and runs side by side
    host_metrics.py  what each machine did every second of a run
"""
