"""`benchdash`: the command for scripts and CI, a client of the REST API (docs/api.md).

It launches a plan or waits on a batch, prints the answer as Markdown (a pull request's
comment) or JSON, and exits 0 (not slower), 1 (slower) or 2 (failed or inconclusive).
Outside the server's layers: it imports nothing of runs and needs only the standard
library, so that a CI machine can run it from a plain checkout.

    main.py     the command line: arguments, the polling, the exit code
    client.py   HTTP with the token, and the API's errors in words
    answer.py   the batch, its results and its nightly check, judged and printed
"""
