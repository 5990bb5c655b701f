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
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

NOT_SLOWER, SLOWER, FAILED, INCONCLUSIVE = "not slower", "slower", "failed", "inconclusive"
EXIT_CODES = {NOT_SLOWER: 0, SLOWER: 1, FAILED: 2, INCONCLUSIVE: 2}

JUDGED = ("faster", "slower", "no significant difference")
NIGHT_JUDGED = ("within noise", "improvement", "one night off")


@dataclass(frozen=True)
class Answer:
    answer: str
    batch: dict[str, Any]  # id, plan, label, status, error, url
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    nightly: dict[str, Any] | None = None  # the nightly check's status and summary

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.answer]


def judge(batch: dict[str, Any], results: dict[str, Any] | None, *, url: str) -> Answer:
    """The answer from the batch's detail and results (None when it did not end done)."""
    told = {k: batch.get(k) for k in ("id", "plan", "label", "status", "error")}
    told["url"] = url
    analysis = batch.get("analysis") or None
    nightly = (
        {"status": analysis.get("status"), "summary": analysis.get("summary")} if analysis else None
    )
    if batch.get("status") != "done" or results is None:
        return Answer(FAILED, told, nightly=nightly)
    verdicts = list(results.get("verdicts") or [])
    summary = list(results.get("summary") or [])
    return Answer(_answer(verdicts, nightly), told, verdicts, summary, nightly)


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
        night = answer.nightly
        lines += [
            "",
            f"Nightly check: {markdown_escape(night['status'])}: "
            f"{markdown_escape(night['summary'])}",
        ]
    lines += ["", f"Exit {answer.exit_code}: {answer.answer}."]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Table cells keep their pipes from ending the cell, and user text stays text."""
    return markdown_escape(text)


# Markdown's inline punctuation: a backslash before each makes it text (CommonMark), so a
# label "[x](url)" is shown as typed, never as a link; a leading "#", "-", "+", "=" or ">"
# would make a heading, a list or a quote of the line.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")
_LINE_START = re.compile(r"^([#+\-=>])")
# Bidirectional controls would reverse the text a reader sees (a "gnp.exe" that reads exe.png).
_BIDI_CONTROLS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def markdown_escape(text: str) -> str:
    """User text as inline Markdown text: punctuation escaped, one line, bidi controls shown."""
    one_line = str(text).replace("\r", " ").replace("\n", " ")
    escaped = _LINE_START.sub(r"\\\1", _MARKDOWN_SPECIAL.sub(r"\\\1", one_line))
    return _bidi_shown(escaped)


def markdown_fence(text: str) -> list[str]:
    """A code block that `text` cannot close: the fence is longer than any run of
    backticks in it."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, _bidi_shown(text), fence]


def _bidi_shown(text: str) -> str:
    return _BIDI_CONTROLS.sub(lambda m: f"U+{ord(m.group()):04X}", text)
