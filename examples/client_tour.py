#!/usr/bin/env python3
"""benchdash through a client generated from its OpenAPI schema: create a plan, launch it
twice, wait for each batch, read its runs and their samples, and compare the two batches.

Generate the client once (openapi-python-client, `pip install openapi-python-client`):

    curl -sf -H "Authorization: Token $BENCHDASH_TOKEN" -H "Accept: application/json" \\
        "$BENCHDASH_URL/api/v1/schema/" > benchdash-schema.json
    openapi-python-client generate --path benchdash-schema.json --meta none \\
        --output-path benchdash_client

then, with the generated `benchdash_client` package on the path:

    BENCHDASH_URL=http://127.0.0.1:8000 BENCHDASH_TOKEN=... \\
        python3 examples/client_tour.py --load-host 1 [--test cpu] [--target ID]

The exit status is 0 when both batches are done.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from benchdash_client import AuthenticatedClient
from benchdash_client.api.batches import batches_retrieve, batches_runs_list
from benchdash_client.api.compare import compare_retrieve
from benchdash_client.api.plans import plans_create, plans_launch
from benchdash_client.api.runs import runs_samples_retrieve
from benchdash_client.models import Error, PlanRequest, PlanRequestOptions, TestEnum

FINISHED = {"done", "failed", "cancelled", "interrupted", "skipped"}
POLL_S = 1.0


def answer(result: Any, what: str) -> Any:
    """The object the API answered, or a clear exit with its error."""
    if isinstance(result, Error):
        field = f"{result.field}: " if isinstance(result.field, str) else ""
        raise SystemExit(f"{what}: {field}{result.message}")
    if result is None:
        raise SystemExit(f"{what}: no answer")
    return result


def run_batch(client: AuthenticatedClient, plan_id: int, timeout_s: float) -> Any:
    batch = answer(plans_launch.sync(plan_id, client=client), "launch")
    print(f"batch {batch.id} launched")
    deadline = time.monotonic() + timeout_s
    while batch.status.value not in FINISHED:
        if time.monotonic() > deadline:
            raise SystemExit(f"batch {batch.id} still {batch.status.value} after {timeout_s} s")
        time.sleep(POLL_S)
        batch = answer(batches_retrieve.sync(batch.id, client=client), "batch")
    print(f"batch {batch.id}: {batch.status.value} ({batch.runs_done}/{batch.runs_total} runs)")
    return batch


def show_runs(client: AuthenticatedClient, batch_id: int) -> None:
    runs = answer(batches_runs_list.sync(batch_id, client=client), "runs").results
    for run in runs:
        samples, after = [], 0
        while True:  # every sample, a page at a time
            page = answer(runs_samples_retrieve.sync(run.id, client=client, after=after), "samples")
            samples += page.results
            after = page.last_seq
            if page.finished or not page.next_:
                break
        latency = f"{samples[-1].latency_ms} ms" if samples else "-"
        print(
            f"  run {run.id}: threads={run.threads} {run.status.value}, {len(samples)} samples, "
            f"last latency {latency}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load-host", type=int, required=True, help="Load host id.")
    parser.add_argument("--target", type=int, help="Target id, for a database test.")
    parser.add_argument("--test", default="cpu", help="sysbench test (default: cpu).")
    parser.add_argument("--time", type=int, default=2, help="Seconds per run (default: 2).")
    parser.add_argument("--name", default=f"client tour {int(time.time())}", help="Plan name.")
    parser.add_argument("--timeout", type=float, default=300, help="Seconds to wait a batch.")
    args = parser.parse_args()

    client = AuthenticatedClient(
        base_url=os.environ.get("BENCHDASH_URL", "http://127.0.0.1:8000"),
        token=os.environ["BENCHDASH_TOKEN"],
        prefix="Token",
        raise_on_unexpected_status=True,
    )
    plan = answer(
        plans_create.sync(
            client=client,
            body=PlanRequest(
                name=args.name,
                load_host=args.load_host,
                target=args.target,
                test=TestEnum(args.test),
                threads=[1, 2],
                options=PlanRequestOptions.from_dict(
                    {"time": args.time, "report-interval": 1, "rate": 50}
                ),
            ),
        ),
        "plan",
    )
    print(f"plan {plan.id} created: {plan.name}")

    batches = [run_batch(client, plan.id, args.timeout) for _ in range(2)]
    for batch in batches:
        show_runs(client, batch.id)

    ids = ",".join(str(b.id) for b in batches)
    compared = answer(compare_retrieve.sync(client=client, batches=ids), "compare")
    for pair in compared.pairs:
        print(f"{pair.side} against {compared.baseline}:")
        for row in pair.rows:
            diff = "-" if row.diff_percent is None else f"{row.diff_percent:+.1f} %"
            print(f"  threads={row.threads:<5} {row.label:<30} {diff:>9}  {row.verdict}")
    return 0 if all(b.status.value == "done" for b in batches) else 1


if __name__ == "__main__":
    sys.exit(main())
