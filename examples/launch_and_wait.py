#!/usr/bin/env python3
"""Launch a benchdash plan, tail its samples while it runs, and print the summary table.

    BENCHDASH_URL=http://127.0.0.1:8000 BENCHDASH_TOKEN=... python3 launch_and_wait.py PLAN_ID

Only the standard library: copy it anywhere. It polls the samples endpoint with `after=`
(the last sequence number it has seen), so nothing is printed twice and nothing is missed.
Ctrl-C cancels the batch. The exit status is 0 when the batch is done, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

FINISHED = {"done", "failed", "cancelled", "interrupted", "skipped"}
POLL_S = 1.0


class Api:
    def __init__(self, url: str, token: str) -> None:
        if urllib.parse.urlsplit(url).scheme not in {"http", "https"}:
            raise SystemExit(f"not an http(s) URL: {url}")
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Token {token}", "Accept": "application/json"}

    def call(self, method: str, path: str) -> Any:
        """`path` under the API's URL, or a full URL the API gave (a next page)."""
        url = path if path.startswith(self.url + "/") else self.url + path
        # The scheme was checked to be http(s) in __init__.
        request = urllib.request.Request(url, method=method, headers=self.headers)  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
                return json.load(answer)
        except urllib.error.HTTPError as e:
            raise SystemExit(f"{method} {path}: {e.code} {_message(e)}") from None

    def pages(self, path: str) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        while path:
            page = self.call("GET", path)
            results += page["results"]
            path = page["next"]
        return results


def _message(error: urllib.error.HTTPError) -> str:
    try:
        body = json.load(error)
        field = f"{body['field']}: " if body.get("field") else ""
        return field + body["message"]
    except (ValueError, KeyError):
        return error.reason


class Tail:
    """Follows the samples of every run that has started, each from where it left off."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.after: dict[int, int] = {}  # run id -> last seq printed
        self.finished: set[int] = set()

    def follow(self, run: dict[str, Any]) -> None:
        self.after.setdefault(run["id"], 0)

    def poll(self) -> None:
        for run_id in [r for r in self.after if r not in self.finished]:
            page = self.api.call("GET", f"/api/v1/runs/{run_id}/samples?after={self.after[run_id]}")
            for s in page["results"]:
                print(
                    f"  run {run_id} [{s['time_s']:>5g}s] thds {s['threads']} "
                    f"tps {_num(s['tps'])} qps {_num(s['qps'])} "
                    f"p{_num(s['latency_pct'])} {_num(s['latency_ms'])} ms "
                    f"err/s {_num(s['errors_per_s'])}",
                    flush=True,
                )
            self.after[run_id] = page["last_seq"]
            if page["finished"]:
                self.finished.add(run_id)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def wait(api: Api, batch_id: int) -> dict[str, Any]:
    tail = Tail(api)
    shown = None
    while True:
        batch = api.call("GET", f"/api/v1/batches/{batch_id}")
        state = (batch["status"], batch["runs_done"], batch["waiting_for"])
        if state != shown:
            shown = state
            waiting = f" (waiting for {batch['waiting_for']})" if batch["waiting_for"] else ""
            print(
                f"batch {batch_id}: {batch['status']}, {batch['runs_done']}/"
                f"{batch['runs_total']} runs done{waiting}",
                flush=True,
            )
        if batch["current_run"]:
            tail.follow(batch["current_run"])
        tail.poll()
        if batch["status"] in FINISHED:
            for run in api.pages(f"/api/v1/batches/{batch_id}/runs"):
                if run["started_at"]:
                    tail.follow(run)
            tail.poll()
            return batch
        time.sleep(POLL_S)


def summary_table(runs: list[dict[str, Any]]) -> str:
    rows = [["threads", "settings", "tps", "qps", "p95", "errors"]]
    for run in runs:
        figures = run["summary"] or {}
        settings = " ".join(f"{k}={v}" for k, v in sorted(run["settings"].items())) or "-"
        if run["status"] == "done":
            numbers = [figures.get(k) for k in ("tps", "qps", "latency_pct_ms", "errors")]
            rows.append([str(run["threads"]), settings, *(_num(n) for n in numbers)])
        else:
            rows.append([str(run["threads"]), settings, run["status"], run["error"][:60], "", ""])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plan", type=int, help="the id of the plan to launch")
    parser.add_argument("--url", default=os.environ.get("BENCHDASH_URL", "http://127.0.0.1:8000"))
    parser.add_argument(
        "--token",
        default=os.environ.get("BENCHDASH_TOKEN"),
        help="an API token (default: $BENCHDASH_TOKEN)",
    )
    args = parser.parse_args()
    if not args.token:
        parser.error("give a token: --token or BENCHDASH_TOKEN")
    api = Api(args.url, args.token)

    batch = api.call("POST", f"/api/v1/plans/{args.plan}/launch")
    print(f"launched batch {batch['id']} of plan {args.plan}: {batch['runs_total']} runs")
    try:
        batch = wait(api, batch["id"])
    except KeyboardInterrupt:
        api.call("POST", f"/api/v1/batches/{batch['id']}/cancel")
        print(f"\nbatch {batch['id']}: cancel requested")
        return 130
    print()
    print(summary_table(api.pages(f"/api/v1/batches/{batch['id']}/runs")))
    if batch["error"]:
        print(f"\nbatch {batch['id']} {batch['status']}: {batch['error']}")
    return 0 if batch["status"] == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
