"""The command line: `benchdash launch PLAN_ID [--wait]`, `benchdash wait BATCH_ID` and
`benchdash health`.

Exit codes: 0 not slower, 1 slower, 2 failed or inconclusive (answer.py says the rule);
3 when the command itself could not do its work (the server unreachable, an API error, a
bad argument, the wait timed out). `health`: 0 healthy, 1 something is gone or
unreachable (the results database among them, even when the server can say no more than
that), 3 the server could not be asked. With `--format json` every exit code comes
with a JSON document on stdout (at 3: `answer` "could not tell", its `reason`, and at the
timeout `timed_out` and the batch's state then); the words for people go to stderr.
"""

from __future__ import annotations

import argparse
import json
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
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(given)
    except _BadArgument as e:  # before --format is read: looked for in the words given
        return _could_not_tell(_format_asked(given), str(e), prefix="")
    if not args.url or not args.token:
        reason = "give --url and --token, or BENCHDASH_URL and BENCHDASH_TOKEN"
        return _could_not_tell(args.format, reason)
    client = Client(args.url, args.token)
    try:
        return int(args.run(client, args))
    except GaveUp as e:
        url = client.page_url(f"/batches/{e.batch['id']}/")
        return _could_not_tell(args.format, str(e), batch=e.batch, url=url, timed_out=True)
    except (ApiError, TimeoutError) as e:
        return _could_not_tell(args.format, str(e))


def _could_not_tell(form: str, reason: str, *, prefix: str = "benchdash: ", **state: Any) -> int:
    """Exit 3, said on stderr, and on stdout as a JSON answer when JSON was asked for."""
    # the API's words may quote what users typed
    print(f"{prefix}{answer.bidi_shown(reason)}", file=sys.stderr)
    if form == "json":
        print(answer.as_json(answer.could_not_tell(reason, **state)))
    return USAGE_ERROR


def _format_asked(words: Sequence[str]) -> str:
    """`--format`'s value among the words of a command line argparse refused."""
    for n, word in enumerate(words):
        if word.startswith("--format="):
            return word.partition("=")[2]
        if word == "--format" and n + 1 < len(words):
            return words[n + 1]
    return "md"


class GaveUp(TimeoutError):
    """--timeout reached: the batch as it stood then (cancelled, or left running)."""

    def __init__(self, message: str, batch: dict[str, Any]) -> None:
        super().__init__(message)
        self.batch = batch


class _BadArgument(Exception):
    """A command line argparse refused, in its words (its usage already on stderr)."""


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a bad argument; 2 is an answer here (failed or inconclusive):
    main() says it and exits 3."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise _BadArgument(f"{self.prog}: error: {message}")


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
        help="seconds to wait for the batch to end (default 3600); then the batch is "
        "cancelled (it would hold the worker), unless --leave-running",
    )
    parser.add_argument(
        "--leave-running",
        action="store_true",
        help="at the timeout, leave the batch running instead of cancelling it",
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
    health = commands.add_parser("health", help="the workers, beat, sweeper, servers, queue")
    health.set_defaults(run=_health)
    return parser


def _health(client: Client, args: argparse.Namespace) -> int:
    report = client.get("/health", answers=(503,))
    if "healthy" not in report:  # the database-down error: the token was not verified lately
        report = _database_down_report(report)
    if args.format == "json":  # JSON writes a control character as an escape: \u202e
        print(json.dumps(report, indent=2))
    else:
        print(answer.bidi_shown(_health_text(report)))
    return 0 if report["healthy"] else 1


def _database_down_report(error: dict[str, Any]) -> dict[str, Any]:
    """A health report from the server's 503 error while its results database is down,
    to a token it did not verify lately: the database is down; the rest is not known."""
    said = str(error.get("message") or "the server answered 503 without a health report")
    unknown = "the server could not check this token without its database, and tells no more"
    return {
        "healthy": False,
        "problems": [said, unknown],
        "workers": [],
        "beat": None,
        "sweeper": None,
        "broker": None,
        "database": {"reachable": False, "error": said, "down_since": None},
        "queued": None,
    }


def _health_text(report: dict[str, Any]) -> str:
    lines = ["healthy" if report["healthy"] else "UNHEALTHY"]
    lines += [f"  problem: {p}" for p in report["problems"]]
    for p in [*report["workers"], report["beat"], report["sweeper"], report.get("web")]:
        if p is None:  # not told
            continue
        state = "alive" if p["alive"] else "gone"
        age = "never beat" if p["age_s"] is None else f"last heartbeat {p['age_s']:g} s ago"
        extra = f", queues {','.join(p['queues'])}" if p["queues"] else ""
        extra += f", batch {p['batch']}" if p["batch"] else ""
        extra += f", waiting for {p['waiting_for']}" if p["waiting_for"] else ""
        lines.append(f"{p['name']}: {state}, {age}{extra}")
    for name in ("broker", "database"):
        server = report[name]
        if server is None:
            continue
        lines.append(f"{name}: {'reachable' if server['reachable'] else server['error']}")
    queued = report["queued"]
    if queued is None:
        lines.append("queue: unknown while the results database is away")
    for batch in queued or []:
        lines.append(
            f"batch {batch['id']} ({batch['plan']}) {batch['status']}: {batch['waiting_for']}"
        )
    return "\n".join(lines)


def _launch(client: Client, args: argparse.Namespace) -> int:
    # Recorded as launched by the command: the plan's history filters "from the command".
    batch = client.post(f"/plans/{args.plan}/launch", {"launched_by": "cli"})
    if not args.wait:
        link = client.page_url(f"/batches/{batch['id']}/")
        told = {k: batch.get(k) for k in ("id", "plan", "label", "status", "launched_by")}
        launched = {"answer": "launched", "exit_code": 0, "batch": {**told, "url": link}}
        print(
            json.dumps(launched, indent=2)
            if args.format == "json"
            else f"batch {batch['id']} launched: {link}"
        )
        return 0
    return _answer(client, args, batch["id"])


def _wait(client: Client, args: argparse.Namespace) -> int:
    return _answer(client, args, args.batch)


def _answer(client: Client, args: argparse.Namespace, batch_id: int) -> int:
    deadline = time.monotonic() + args.timeout
    batch = _finished(client, batch_id, args, deadline)
    results = (
        client.get(_results_path(batch_id, args.baseline)) if batch["status"] == "done" else None
    )
    alert = _night_alert(client, batch, args, deadline)
    judged = answer.judge(
        batch, results, url=client.page_url(f"/batches/{batch_id}/results"), alert=alert
    )
    print(answer.as_json(judged) if args.format == "json" else answer.as_markdown(judged), end="")
    return judged.exit_code


def _finished(
    client: Client, batch_id: int, args: argparse.Namespace, deadline: float
) -> dict[str, Any]:
    """The batch's detail once it ended; a scheduled batch also once its check is stored.
    At the timeout the batch is cancelled (or left running with --leave-running), and said."""
    while True:
        batch: dict[str, Any] = client.get(f"/batches/{batch_id}")
        if batch["status"] in FINISHED and not _check_pending(batch):
            return batch
        if time.monotonic() > deadline:
            raise _given_up(client, batch, args)
        time.sleep(args.poll)


def _given_up(client: Client, batch: dict[str, Any], args: argparse.Namespace) -> GaveUp:
    """What the timeout did to the batch, in words (cancelled, or left running), with the
    batch as it stood then."""
    head = f"batch {batch['id']} still {batch['status']} after {args.timeout:g} s"
    if batch["status"] in FINISHED:  # ended, its nightly check not stored yet
        return GaveUp(f"{head}: its nightly check was not stored yet", batch)
    if args.leave_running:
        said = f"{head}; left running (--leave-running): it holds its worker until it ends"
        return GaveUp(said, batch)
    try:
        cancelled: dict[str, Any] = client.post(f"/batches/{batch['id']}/cancel")
    except ApiError as e:
        return GaveUp(f"{head}; it could not be cancelled ({e}) and is still running", batch)
    return GaveUp(f"{head}; cancelled, so that it does not hold the worker", cancelled)


def _night_alert(
    client: Client, batch: dict[str, Any], args: argparse.Namespace, deadline: float
) -> dict[str, Any] | None:
    """The alert of an alerted night, once its confirmation re-run has said (or the time
    is up: then as it stands), with a link to the plan's history."""
    analysis = batch.get("analysis") or {}
    if analysis.get("status") != "regression" or batch.get("plan") is None:
        return None
    while True:
        listed = client.get(f"/plans/{batch['plan']}/alerts").get("alerts", [])
        found = next((a for a in listed if a.get("batch") == batch["id"]), None)
        if found is None or found.get("status") != "confirming" or time.monotonic() > deadline:
            break
        time.sleep(args.poll)
    if found is not None:
        found["url"] = client.page_url(f"/plans/{batch['plan']}/history#alerts")
    return found


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
