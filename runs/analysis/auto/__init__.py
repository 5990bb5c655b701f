"""The automatic modes a plan may ask for in its `auto` field, one module each, named as
the field names them:

- settings.py: the `auto` field read and checked (Auto, RepeatsAuto, ThreadsAuto,
  RateAuto), with its defaults;
- repeats.py: repeats auto: one more repeat until a cell's comparison with the baseline
  is decided (a sequential rule: Bonferroni over the looks), or its mean clear enough;
- threads.py: threads search: the knee of the throughput curve;
- rate.py: rate search: the highest sustainable open-loop rate (--rate), and the verdict
  on offered and fixed rates;
- failures.py: the rate search's model of failure against the offered rate (a chance of
  failing fitted non-decreasing in the rate), and the host's noise told from the load;
- cells.py: what the runs of a cell so far say, as every mode reads them;
- rounds.py: a round of the modes over a batch's runs so far: the cells to add next, with
  the reason each runs, and what each mode found, in words.

The batch's execution runs them in runs/execution/auto.py (batch_extend): after every
queued run has run, it asks rounds.next_cells and queues what it returns as ordinary runs.
Every mode reads only the runs measured so far, so a batch resumed after a crash goes on
where it was.

Pure: no Django, no I/O.
"""
