"""The command line: `benchdash launch PLAN_ID [--wait]` and `benchdash wait BATCH_ID`.

Exit codes: 0 not slower, 1 slower, 2 failed or inconclusive (answer.py says the rule);
3 when the command itself could not do its work (the server unreachable, an API error, a
bad argument, the wait timed out).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from benchdash_cli import answer
from benchdash_cli.client import ApiError, Client

FINISHED = ("done", "failed", "cancelled", "interrupted", "skipped")
USAGE_ERROR = 3


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.url or not args.token:
        print(
            "benchdash: give --url and --token, or BENCHDASH_URL and BENCHDASH_TOKEN",
            file=sys.stderr,
        )
        return USAGE_ERROR
    client = Client(args.url, args.token)
    try:
        return int(args.run(client, args))
    except ApiError as e:
        print(f"benchdash: {e}", file=sys.stderr)
        return USAGE_ERROR
    except TimeoutError as e:
        print(f"benchdash: {e}", file=sys.stderr)
        return USAGE_ERROR


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a bad argument; 2 is an answer here (failed or inconclusive)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="benchdash",
        description="Launch a benchdash plan or wait on a batch; print the answer; "
        "exit 0 (not slower), 1 (slower), 2 (failed or inconclusive), 3 (could not tell).",
    )
    parser.add_argument(
        "--url",
        default=os.environ.get("BENCHDASH_URL"),
        help="the server, e.g. https://bench.example.com (BENCHDASH_URL)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("BENCHDASH_TOKEN"),
        help="an API token (BENCHDASH_TOKEN; the variable keeps it off the command line)",
    )
    parser.add_argument(
        "--format",
        choices=("md", "json"),
        default="md",
        help="Markdown, for a pull request's comment, or JSON",
    )
    parser.add_argument(
        "--baseline",
        type=int,
        default=None,
        help="index of the baseline series (0: the first), as on the results page",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        help="seconds to wait for the batch to end (default 3600)",
    )
    parser.add_argument("--poll", type=float, default=5.0, help="seconds between polls")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    launch = commands.add_parser("launch", help="launch a plan now")
    launch.add_argument("plan", type=int, metavar="PLAN_ID")
    launch.add_argument("--wait", action="store_true", help="wait for its answer")
    launch.set_defaults(run=_launch)
    wait = commands.add_parser("wait", help="wait for a batch to end, and answer")
    wait.add_argument("batch", type=int, metavar="BATCH_ID")
    wait.set_defaults(run=_wait)
    return parser


def _launch(client: Client, args: argparse.Namespace) -> int:
    batch = client.post(f"/plans/{args.plan}/launch")
    if not args.wait:
        link = client.page_url(f"/batches/{batch['id']}/")
        print(f"batch {batch['id']} launched: {link}")
        return 0
    return _answer(client, args, batch["id"])


def _wait(client: Client, args: argparse.Namespace) -> int:
    return _answer(client, args, args.batch)


def _answer(client: Client, args: argparse.Namespace, batch_id: int) -> int:
    batch = _finished(client, batch_id, timeout=args.timeout, poll=args.poll)
    results = (
        client.get(_results_path(batch_id, args.baseline)) if batch["status"] == "done" else None
    )
    judged = answer.judge(batch, results, url=client.page_url(f"/batches/{batch_id}/results"))
    print(answer.as_json(judged) if args.format == "json" else answer.as_markdown(judged), end="")
    return judged.exit_code


def _finished(client: Client, batch_id: int, *, timeout: float, poll: float) -> dict[str, Any]:
    """The batch's detail once it ended; a scheduled batch also once its check is stored."""
    deadline = time.monotonic() + timeout
    while True:
        batch: dict[str, Any] = client.get(f"/batches/{batch_id}")
        if batch["status"] in FINISHED and not _check_pending(batch):
            return batch
        if time.monotonic() > deadline:
            raise TimeoutError(f"batch {batch_id} still {batch['status']} after {timeout:g} s")
        time.sleep(poll)


def _check_pending(batch: dict[str, Any]) -> bool:
    """A scheduled batch is checked against the nights before it a moment after it ends."""
    return (
        batch.get("launched_by") == "schedule"
        and batch["status"] == "done"
        and not batch.get("analysis")
    )


def _results_path(batch_id: int, baseline: int | None) -> str:
    return f"/batches/{batch_id}/results" + (
        f"?baseline={baseline}" if baseline is not None else ""
    )
