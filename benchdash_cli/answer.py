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
    name = f"{batch['label']} · " if batch.get("label") else ""
    lines = [
        f"### benchdash: {answer.answer}",
        "",
        f"{name}batch [{batch['id']}]({batch['url']}): {batch['status']}",
    ]
    if batch.get("error"):
        lines += ["", "```", str(batch["error"]).strip(), "```"]
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
    lines += [""] + [f"- {line}" for line in answer.summary] if answer.summary else []
    if answer.nightly:
        lines += ["", f"Nightly check: {answer.nightly['status']}: {answer.nightly['summary']}"]
    lines += ["", f"Exit {answer.exit_code}: {answer.answer}."]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Table cells keep their pipes from ending the cell."""
    return text.replace("|", "\\|").replace("\n", " ")
