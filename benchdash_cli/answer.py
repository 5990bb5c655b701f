"""The answer of a finished batch, for a gate: slower, not slower, or failed/inconclusive,
from what the API says of it (GET /batches/{id}, /batches/{id}/results), and how it is
printed: Markdown for a pull request's comment, or JSON.

The rule, in this order:
- a batch that did not end `done` (failed, cancelled, interrupted, skipped): FAILED, 2;
- any cell slower than the baseline's (Welch's t-test at 95 %), or the nightly check of a
  scheduled batch alerting (a new slower step): SLOWER, 1;
- any cell the verdicts could not judge (too few repeats, cannot compare): INCONCLUSIVE, 2;
- cells judged faster or the same, or a nightly check that did not alert: NOT_SLOWER, 0;
- nothing judged at all (one series and no nightly check): INCONCLUSIVE, 2.

For a night alerted or inconclusive, the answer carries what a pull request's comment must
say: each alerted cell's steps with their size and interval and tonight against the band,
what changed since the baseline nights and the confirmation re-run's verdict (from the
night's alert, GET /plans/{id}/alerts); for an inconclusive night, why each cell could not
be judged.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

NOT_SLOWER, SLOWER, FAILED, INCONCLUSIVE = "not slower", "slower", "failed", "inconclusive"
COULD_NOT_TELL = "could not tell"  # the command could not do its work: main.py says when
EXIT_CODES = {NOT_SLOWER: 0, SLOWER: 1, FAILED: 2, INCONCLUSIVE: 2, COULD_NOT_TELL: 3}

JUDGED = ("faster", "slower", "no significant difference")
NIGHT_JUDGED = ("within noise", "improvement", "one night off")


@dataclass(frozen=True)
class Answer:
    answer: str
    batch: dict[str, Any]  # id, plan, label, status, error, url
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    nightly: dict[str, Any] | None = None  # the nightly check's status and summary
    # an alerted night's flagged cells (an inconclusive night's unjudged ones): label,
    # verdict, checks (tonight against the band, in words), steps (size and interval)
    night_cells: list[dict[str, Any]] = field(default_factory=list)
    # the night's alert: id, status, verdict (the confirmation's), changes, url
    alert: dict[str, Any] | None = None
    # why the command could not tell (an API error, the server unreachable, a bad
    # argument, --timeout); empty when it answered
    reason: str = ""
    timed_out: bool = False  # --timeout was reached: `batch` is its state then

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.answer]


def judge(
    batch: dict[str, Any],
    results: dict[str, Any] | None,
    *,
    url: str,
    alert: dict[str, Any] | None = None,
) -> Answer:
    """The answer from the batch's detail and results (None when it did not end done),
    and the night's alert (None when there is none)."""
    told = {k: batch.get(k) for k in ("id", "plan", "label", "status", "error")}
    told["url"] = url
    analysis = batch.get("analysis") or None
    nightly = (
        {"status": analysis.get("status"), "summary": analysis.get("summary")} if analysis else None
    )
    cells = list((analysis or {}).get("cells") or [])
    if batch.get("status") != "done" or results is None:
        return Answer(FAILED, told, nightly=nightly)
    verdicts = list(results.get("verdicts") or [])
    summary = list(results.get("summary") or [])
    said = _answer(verdicts, nightly)
    return Answer(said, told, verdicts, summary, nightly, _night_cells(cells, said), _alert(alert))


# A batch's state when the command gave up waiting on it: what it ran so far.
PROGRESS_KEYS = ("runs_done", "runs_cancelled", "runs_skipped", "runs_total")


def could_not_tell(
    reason: str, *, batch: dict[str, Any] | None = None, url: str = "", timed_out: bool = False
) -> Answer:
    """The answer when the command could not tell (exit 3), with the batch's state so far
    when it had one: a script parsing the answer gets a document on every exit code."""
    told: dict[str, Any] = {}
    if batch:
        keys = ("id", "plan", "label", "status", "error", *PROGRESS_KEYS)
        told = {**{k: batch.get(k) for k in keys}, "url": url}
    return Answer(COULD_NOT_TELL, told, reason=reason, timed_out=timed_out)


POINT_KEYS = ("metric", "name", "text", "change_pct", "low_pct", "high_pct", "batch", "new")


def _night_cells(cells: list[dict[str, Any]], said: str) -> list[dict[str, Any]]:
    """The cells a reader of an alerted night needs (the flagged ones), or of an
    inconclusive one (those the check could not judge), with their words and sizes."""
    if said == SLOWER:
        chosen = [c for c in cells if c.get("flagged")]
    elif said == INCONCLUSIVE:
        chosen = [c for c in cells if c.get("verdict") in ("not enough history", "no figure")]
    else:
        return []
    return [
        {
            "label": c.get("label"),
            "verdict": c.get("verdict"),
            "checks": [
                k.get("text") for k in c.get("checks") or [] if k.get("verdict") != "within noise"
            ],
            "steps": [
                {k: point.get(k) for k in POINT_KEYS}
                for point in c.get("steps") or []
                if point.get("alert") or (said == SLOWER and point.get("new"))
            ],
        }
        for c in chosen
    ]


def _alert(alert: dict[str, Any] | None) -> dict[str, Any] | None:
    if not alert:
        return None
    keys = ("id", "status", "verdict", "confirmation", "confirmation_status", "url")
    told = {k: alert.get(k) for k in keys}
    told["changes"] = [c.get("text") for c in alert.get("changes") or []]
    return told


def _answer(verdicts: list[dict[str, Any]], nightly: dict[str, Any] | None) -> str:
    said = {v.get("verdict") for v in verdicts}
    night = (nightly or {}).get("status")
    if "slower" in said or night == "regression":
        return SLOWER
    if said - set(JUDGED):
        return INCONCLUSIVE
    if said or night in NIGHT_JUDGED:
        return NOT_SLOWER
    return INCONCLUSIVE


# --- printed ----------------------------------------------------------------------------------


def as_json(answer: Answer) -> str:
    return json.dumps({**asdict(answer), "exit_code": answer.exit_code}, indent=2)


def as_markdown(answer: Answer) -> str:
    batch = answer.batch
    name = f"{markdown_escape(batch['label'])} · " if batch.get("label") else ""
    lines = [
        f"### benchdash: {answer.answer}",
        "",
        f"{name}batch [{batch['id']}]({batch['url']}): {markdown_escape(batch['status'])}",
    ]
    if batch.get("error"):
        lines += ["", *markdown_fence(str(batch["error"]).strip())]
    if answer.verdicts:
        lines += [
            "",
            "| Cell | Threads | Verdict | Difference | 95 % interval |",
            "|---|--:|---|---|---|",
        ]
        lines += [
            f"| {_cell(v['series'])} | {v['threads']} | {v['verdict']} | "
            f"{_cell(v.get('difference') or '')} | {_cell(v.get('interval') or '')} |"
            for v in answer.verdicts
        ]
    lines += (
        [""] + [f"- {markdown_escape(line)}" for line in answer.summary] if answer.summary else []
    )
    if answer.nightly:
        lines += ["", f"Nightly check: {markdown_escape(_night_said(answer.nightly))}"]
    lines += _night_lines(answer)
    lines += ["", f"Exit {answer.exit_code}: {answer.answer}."]
    return "\n".join(lines) + "\n"


def _night_said(night: dict[str, Any]) -> str:
    """`regression: 1 of 1 cells ...`; a summary that starts with its status says it once
    (not "not enough history: not enough history: ...")."""
    status, summary = str(night.get("status") or ""), str(night.get("summary") or "")
    return summary if not status or summary.startswith(status) else f"{status}: {summary}"


def _night_lines(answer: Answer) -> list[str]:
    lines: list[str] = []
    # each change point as the check wrote it: its size and 95 % interval in its words
    points = [(c, point) for c in answer.night_cells for point in c["steps"]]
    if points:
        lines += [
            "",
            "| Cell | Change point (size, 95 % interval) | Tonight against the band |",
            "|---|---|---|",
        ]
        lines += [
            f"| {_cell(c['label'])} | {_cell(point['text'] or '')} | "
            f"{_cell('; '.join(c['checks']))} |"
            for c, point in points
        ]
    elif answer.night_cells:
        said = [(c["label"], "; ".join(c["checks"]) or c["verdict"]) for c in answer.night_cells]
        lines += [""] + [
            f"- {markdown_escape(label)}: {markdown_escape(why)}" for label, why in said
        ]
    alert = answer.alert
    if alert is None:
        return lines
    lines += ["", "What changed since the baseline nights:"]
    lines += [f"- {markdown_escape(t)}" for t in alert["changes"]] or ["- nothing recorded differs"]
    link = f"[alert {alert['id']}]({alert['url']})" if alert.get("url") else f"alert {alert['id']}"
    verdict = f": {markdown_escape(alert['verdict'])}" if alert.get("verdict") else ""
    if alert["status"] == "confirming" and not alert.get("verdict"):
        verdict = f": the re-run (batch {alert.get('confirmation')}) had not ended"
    lines += ["", f"Confirmation: {markdown_escape(alert['status'])}{verdict} ({link})"]
    return lines


def _cell(text: str) -> str:
    """Table cells keep their pipes from ending the cell, and user text stays text."""
    return markdown_escape(text)


# Markdown's inline punctuation: a backslash before each makes it text (CommonMark), so a
# label "[x](url)" is shown as typed, never as a link; a leading "#", "-", "+", "=" or ">"
# would make a heading, a list or a quote of the line.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")
_LINE_START = re.compile(r"^([#+\-=>])")
# Bidirectional controls would reverse the text a reader sees (a "gnp.exe" that reads
# exe.png): the same characters as runs/bidi.py, which this package may not import.
_BIDI_CONTROLS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def markdown_escape(text: str) -> str:
    """User text as inline Markdown text: punctuation escaped, one line, bidi controls shown
    (before the escaping, so that the brackets of "[U+202E]" are text too)."""
    one_line = bidi_shown(str(text)).replace("\r", " ").replace("\n", " ")
    return _LINE_START.sub(r"\\\1", _MARKDOWN_SPECIAL.sub(r"\\\1", one_line))


def markdown_fence(text: str) -> list[str]:
    """A code block that `text` cannot close: the fence is longer than any run of
    backticks in it."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, bidi_shown(text), fence]


def bidi_shown(text: str) -> str:
    """`text` with each bidirectional control replaced by its name, "[U+202E]", as the
    pages, the mails and the chat messages show it."""
    return _BIDI_CONTROLS.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)
