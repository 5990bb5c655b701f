"""The gate's rule and its print (benchdash_cli/answer.py), on the API's answers as it
gives them (the fields of GET /batches/{id} and /batches/{id}/results)."""

from __future__ import annotations

import json
import re

from benchdash_cli.answer import (
    FAILED,
    INCONCLUSIVE,
    NOT_SLOWER,
    SLOWER,
    as_json,
    as_markdown,
    judge,
)

URL = "https://bench.example.com/batches/7/results"


def batch(status="done", analysis=None, error=""):
    return {
        "id": 7,
        "plan": 3,
        "label": "flush",
        "status": status,
        "error": error,
        "analysis": analysis,
    }


def verdict(word, series="flush=2"):
    return {
        "series": series,
        "threads": 4,
        "verdict": word,
        "difference": {"slower": "12 % slower", "faster": "2.0\u00d7 faster"}.get(
            word, "\u22121 % to +2 %"
        ),
        "interval": "0.86\u20130.90\u00d7",
    }


def results(*words):
    return {
        "verdicts": [verdict(w) for w in words],
        "summary": ["flush=2 is 12 % slower than flush=1"],
    }


def test_a_slower_cell_makes_the_answer_slower_whatever_the_others():
    answer = judge(batch(), results("faster", "slower", "too few repeats"), url=URL)
    assert (answer.answer, answer.exit_code) == (SLOWER, 1)


def test_cells_faster_or_the_same_are_not_slower():
    answer = judge(batch(), results("faster", "no significant difference"), url=URL)
    assert (answer.answer, answer.exit_code) == (NOT_SLOWER, 0)


def test_a_cell_that_could_not_be_judged_makes_it_inconclusive():
    answer = judge(batch(), results("faster", "too few repeats"), url=URL)
    assert (answer.answer, answer.exit_code) == (INCONCLUSIVE, 2)


def test_nothing_to_judge_is_inconclusive():
    assert judge(batch(), {"verdicts": [], "summary": []}, url=URL).answer == INCONCLUSIVE


def test_a_batch_that_did_not_end_done_failed():
    for status in ("failed", "cancelled", "interrupted", "skipped"):
        answer = judge(batch(status, error="preflight failed"), None, url=URL)
        assert (answer.answer, answer.exit_code) == (FAILED, 2)


def test_a_nightly_alert_is_slower_and_a_quiet_night_is_not():
    alert = {"status": "regression", "summary": "1 of 1 cells regressed beyond the noise"}
    quiet = {"status": "within noise", "summary": "all 1 cells within the noise"}
    assert judge(batch(analysis=alert), results(), url=URL).answer == SLOWER
    assert judge(batch(analysis=quiet), results(), url=URL).answer == NOT_SLOWER
    waiting = {"status": "not enough history", "summary": "not enough history: 2 of 5 nights"}
    assert judge(batch(analysis=waiting), results(), url=URL).answer == INCONCLUSIVE


def test_markdown_for_a_pull_request():
    text = as_markdown(judge(batch(), results("slower"), url=URL))

    assert text == (
        "### benchdash: slower\n"
        "\n"
        f"flush \u00b7 batch [7]({URL}): done\n"
        "\n"
        "| Cell | Threads | Verdict | Difference | 95 % interval |\n"
        "|---|--:|---|---|---|\n"
        "| flush=2 | 4 | slower | 12 % slower | 0.86\u20130.90\u00d7 |\n"
        "\n"
        "- flush=2 is 12 % slower than flush=1\n"
        "\n"
        "Exit 1: slower.\n"
    )


def test_markdown_of_a_failed_batch_quotes_its_error():
    text = as_markdown(judge(batch("failed", error="preflight failed:\nrefused"), None, url=URL))
    assert "```\npreflight failed:\nrefused\n```" in text and text.endswith("Exit 2: failed.\n")


def test_json_carries_the_answer_and_the_exit_code():
    body = json.loads(as_json(judge(batch(), results("faster"), url=URL)))
    assert body["answer"] == NOT_SLOWER and body["exit_code"] == 0
    assert body["batch"] == {
        "id": 7,
        "plan": 3,
        "label": "flush",
        "status": "done",
        "error": "",
        "url": URL,
    }
    assert body["verdicts"][0]["verdict"] == "faster"


def test_a_label_with_markdown_stays_text_and_an_error_stays_in_its_fence():
    evil = "[x](https://evil.example/)"
    error = f"boom\n```\n{evil}\n"
    answer = judge(batch("failed", error=error), None, url=URL)
    answer.batch["label"] = evil
    answer.summary.append(f"*{evil}*")

    text = as_markdown(answer)

    fence = next(line for line in text.splitlines() if line.startswith("```"))
    assert len(fence) > 3  # longer than the error's own ```
    before, block = text.split(fence + "\n", 1)
    quoted, after = block.split("\n" + fence + "\n", 1)
    assert quoted == error.strip()  # the fence closes after the error, not inside it
    for outside in (before, after):  # the label and the summary: text, not links
        assert "](https://evil.example/)" not in outside.replace("\\](", "")
        assert "*[" not in outside


def test_bidi_controls_are_shown_by_name_in_the_text_and_in_the_fence():
    error = "target \u202elqs.ym is away"
    answer = judge(batch("failed", error=error), None, url=URL)
    answer.batch["label"] = "night \u202egnp.exe\u202c(https://evil.example/)"

    text = as_markdown(answer)

    assert not re.search("[\u200e\u200f\u202a-\u202e\u2066-\u2069]", text)
    # Escaped in the text: the name's brackets make no link with what follows.
    assert "night \\[U+202E\\]gnp.exe\\[U+202C\\](https://evil.example/)" in text
    assert "\ntarget [U+202E]lqs.ym is away\n" in text  # the fence shows it as typed


STEP = {
    "metric": "throughput", "name": "tps", "batch": 7, "new": True, "alert": True,
    "text": "tps stepped slower: 1,000 to 900 (-10.0 %, 95 % interval -12.0 % to -8.0 %)",
    "change_pct": -10.0, "low_pct": -12.0, "high_pct": -8.0, "pvalue": 0.001,
}  # fmt: skip
ALERTED = {
    "status": "regression",
    "summary": "1 of 2 cells slower",
    "cells": [
        {"label": "threads=1", "verdict": "regression", "flagged": True, "steps": [STEP],
         "checks": [{"verdict": "regression", "text": "tps 900 vs baseline 1,000 (-10 %)"},
                    {"verdict": "within noise", "text": "p95 2.00 ms vs baseline 2.00 ms"}]},
        {"label": "threads=2", "verdict": "within noise", "flagged": False, "steps": [],
         "checks": []},
    ],
}  # fmt: skip
ALERT = {
    "id": 4, "batch": 7, "status": "confirmed", "confirmation": 8, "confirmation_status": "done",
    "verdict": "threads=1: confirmed, the re-run's tps 902 is on the slower side of 950",
    "changes": [{"text": "server version: 10.11.8 \u2192 10.11.9"}],
    "url": "https://bench.example.com/plans/3/history#alerts",
}  # fmt: skip


def test_an_alerted_night_says_its_steps_sizes_what_changed_and_the_confirmation():
    # issue 37: the gate printed a status line only, so a PR comment could not say what
    # regressed.
    judged = judge(batch(analysis=ALERTED), results(), url=URL, alert=ALERT)
    text = as_markdown(judged)

    assert judged.answer == SLOWER
    assert "Nightly check: regression: 1 of 2 cells slower" in text
    assert (
        "| threads=1 | tps stepped slower: 1,000 to 900 (-10.0 %, 95 % interval -12.0 % to "
        "-8.0 %) | tps 900 vs baseline 1,000 (-10 %) |"
    ) in text
    assert "threads=2" not in text
    assert (
        "What changed since the baseline nights:\n- server version: 10.11.8 \u2192 10.11.9" in text
    )
    assert "Confirmation: confirmed: threads=1: confirmed, the re-run's tps 902" in text
    assert "([alert 4](https://bench.example.com/plans/3/history#alerts))" in text

    body = json.loads(as_json(judged))
    (cell,) = body["night_cells"]
    assert cell["label"] == "threads=1" and cell["checks"] == ["tps 900 vs baseline 1,000 (-10 %)"]
    assert cell["steps"][0]["change_pct"] == -10.0 and cell["steps"][0]["low_pct"] == -12.0
    assert body["alert"]["status"] == "confirmed" and body["alert"]["changes"] == [
        "server version: 10.11.8 \u2192 10.11.9"
    ]


def test_an_inconclusive_night_says_why_and_once():
    # issue 37: "not enough history: not enough history: 2 of 5 nights".
    waiting = {
        "status": "not enough history",
        "summary": "not enough history: 2 of 5 nights",
        "cells": [{"label": "threads=1", "verdict": "not enough history", "flagged": False,
                   "steps": [], "checks": [{"verdict": "not enough history",
                                            "text": "not enough history: 2 of 5 nights"}]}],
    }  # fmt: skip
    judged = judge(batch(analysis=waiting), results(), url=URL)
    text = as_markdown(judged)

    assert judged.answer == INCONCLUSIVE
    assert "Nightly check: not enough history: 2 of 5 nights\n" in text
    assert "not enough history: not enough history" not in text
    assert "- threads=1: not enough history: 2 of 5 nights" in text
    assert json.loads(as_json(judged))["night_cells"][0]["verdict"] == "not enough history"


def test_an_alert_still_confirming_says_so():
    confirming = {**ALERT, "status": "confirming", "verdict": "", "changes": []}
    text = as_markdown(judge(batch(analysis=ALERTED), results(), url=URL, alert=confirming))
    assert "- nothing recorded differs" in text
    assert "Confirmation: confirming: the re-run (batch 8) had not ended" in text
