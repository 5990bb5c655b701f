"""`benchdash` as a script runs it: a process against the live test server, with a token
in the environment. Stored batches answer slower (exit 1), not slower (0) and failed (2);
a plan launched with --wait runs on a real worker."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runs.models import Alert, LoadHost, Plan
from tests import stored
from tests.api.test_alerts import QUIET, nights
from tests.api.test_history import confirmed
from tests.web.test_history_launches import chart_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def benchdash(live_server, owner_token):
    def run(*args: str, token: str | None = owner_token) -> subprocess.CompletedProcess[str]:
        env = {"PATH": "/usr/bin:/bin", "BENCHDASH_URL": live_server.url}
        if token is not None:
            env["BENCHDASH_TOKEN"] = token
        done = subprocess.run(
            [sys.executable, "-m", "benchdash_cli", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert owner_token not in done.stdout + done.stderr  # never printed
        return done

    return run


@pytest.fixture
def flush_plan(transactional_db) -> Plan:
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    return Plan.objects.create(
        name="flush",
        load_host=local,
        test="oltp_insert",
        threads=[1],
        server_settings={"innodb_flush_log_at_trx_commit": ["1", "2"]},
    )


def test_a_batch_not_slower_exits_0_and_slower_exits_1(benchdash, flush_plan):
    # Stored runs: flush=2 measures twice the tps of flush=1, four repeats each.
    batch = stored.finished_batch(flush_plan, (1,), 4, 10, None)

    faster = benchdash("wait", str(batch.pk))
    assert faster.returncode == 0, faster.stderr
    assert faster.stdout.startswith("### benchdash: not slower\n")
    assert "| flush=2 | 1 | faster |" in faster.stdout
    assert faster.stdout.endswith("Exit 0: not slower.\n")

    # Against flush=2 as the baseline, flush=1 is the slower one.
    slower = benchdash("--format", "json", "--baseline", "1", "wait", str(batch.pk))
    assert slower.returncode == 1, slower.stderr
    answer = json.loads(slower.stdout)
    assert answer["answer"] == "slower" and answer["exit_code"] == 1
    (verdict,) = answer["verdicts"]
    assert verdict["verdict"] == "slower" and verdict["ratio_high"] < 1
    assert answer["batch"]["url"].endswith(f"/batches/{batch.pk}/results")


def test_a_failed_batch_exits_2(benchdash, flush_plan):
    batch = stored.bare_batch(flush_plan, status="failed", error="preflight failed: refused")

    failed = benchdash("wait", str(batch.pk))

    assert failed.returncode == 2, failed.stderr
    assert failed.stdout.startswith("### benchdash: failed\n")
    assert "preflight failed: refused" in failed.stdout


def test_without_a_token_or_with_a_wrong_one_it_says_so_and_exits_3(benchdash, flush_plan):
    batch = stored.bare_batch(flush_plan, status="failed")

    missing = benchdash("wait", str(batch.pk), token=None)
    wrong = benchdash("wait", str(batch.pk), token="not-a-token")
    unknown = benchdash("wait", "999999")
    bad = benchdash("wait", "seven")

    assert missing.returncode == 3 and "BENCHDASH_TOKEN" in missing.stderr
    assert wrong.returncode == 3 and "HTTP 401" in wrong.stderr
    assert "not-a-token" not in wrong.stdout + wrong.stderr
    assert unknown.returncode == 3 and "HTTP 404" in unknown.stderr
    assert bad.returncode == 3 and "invalid int value" in bad.stderr


BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_bidi_controls_that_users_typed_are_printed_by_name(benchdash, flush_plan):
    flush_plan.name = "flush \u202egnp.exe"
    flush_plan.save()
    queued = stored.bare_batch(flush_plan)  # the health report names its plan
    failed = stored.bare_batch(
        flush_plan, status="failed", label="night \u2066x\u2069", error="\u202elqs.ym is away"
    )

    health = benchdash("health")
    answer = benchdash("wait", str(failed.pk))

    assert f"batch {queued.pk} (flush [U+202E]gnp.exe) queued: " in health.stdout, health.stdout
    assert answer.returncode == 2, answer.stderr
    assert "night \\[U+2066\\]x\\[U+2069\\] · batch" in answer.stdout
    assert "\n[U+202E]lqs.ym is away\n" in answer.stdout
    printed = health.stdout + health.stderr + answer.stdout + answer.stderr
    assert not BIDI.search(printed)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_launch_and_wait_runs_the_plan_on_a_worker(benchdash, celery_worker, local_host, owner):
    plan = Plan.objects.create(
        name="primes",
        created_by=owner,
        target=None,
        load_host=local_host,
        test="cpu",
        # A step no neighbour hides: 8x the primes is some 20x the time a prime test,
        # and runs of 1,000 events are not over in the few ms one busy second takes (200
        # events at 4x read "no significant difference" in a loaded whole run, one repeat
        # 4.6x slower than the others).
        options={"time": 0, "events": 1000, "report-interval": 0},
        threads=[1],
        option_axes={"cpu-max-prime": [2000, 16000]},
        repeats=3,
    )

    launched = benchdash("--poll", "0.5", "launch", str(plan.pk), "--wait")

    assert launched.returncode == 1, launched.stdout + launched.stderr  # 8x the primes: slower
    assert "| cpu-max-prime=16000 | 1 | slower |" in launched.stdout
    batch = plan.batches.get()
    assert f"batch [{batch.pk}](" in launched.stdout and batch.status == "done"


def test_at_the_timeout_the_batch_is_cancelled_or_left_running_as_asked(
    benchdash, flush_plan, owner
):
    # issue 37: --timeout left the batch running and holding the worker, without a word.
    waiting = stored.bare_batch(flush_plan, status="queued")
    Plan.objects.filter(pk=flush_plan.pk).update(created_by=owner)
    left = benchdash(
        "--timeout", "0.5", "--poll", "0.2", "--leave-running", "wait", str(waiting.pk)
    )
    assert left.returncode == 3
    assert "left running (--leave-running)" in left.stderr
    waiting.refresh_from_db()
    assert waiting.status == "queued"

    cancelled = benchdash("--timeout", "0.5", "--poll", "0.2", "wait", str(waiting.pk))

    assert cancelled.returncode == 3, cancelled.stderr
    assert f"batch {waiting.pk} still queued after 0.5 s; cancelled" in cancelled.stderr
    waiting.refresh_from_db()
    assert waiting.status == "cancelled"


def test_an_alerted_night_tells_its_steps_what_changed_and_the_confirmation(benchdash, owner):
    # issue 37: for an alerted night the gate said only "regression".
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = Plan.objects.create(
        name="nightly", load_host=local, test="oltp_insert", threads=[1],
        options={"time": 60}, created_by=owner,
    )  # fmt: skip
    *_, slow = nights(plan, [*QUIET, 900])
    confirmed(Alert.objects.get(batch=slow).confirmation, 900.0)

    told = benchdash("--format", "json", "wait", str(slow.pk))

    assert told.returncode == 1, told.stdout + told.stderr
    body = json.loads(told.stdout)
    (cell,) = body["night_cells"]
    (step,) = cell["steps"]
    assert step["batch"] == slow.pk and step["change_pct"] < -5 and step["low_pct"] is not None
    assert body["alert"]["status"] == "confirmed" and "confirmed" in body["alert"]["verdict"]
    assert isinstance(body["alert"]["changes"], list)
    shown = benchdash("wait", str(slow.pk)).stdout
    assert "| Cell | Change point (size, 95 % interval) |" in shown
    assert "stepped slower" in shown and "Confirmation: confirmed" in shown


def test_a_launch_from_the_command_is_from_the_command_and_its_timeout_answers_json(
    benchdash, client, owner, local_host
):
    # issue 56: the command's launches were recorded as `api`, so the history's "from the
    # command" never matched; and at --timeout `--format json` printed nothing on stdout.
    plan = Plan.objects.create(
        name="primes", created_by=owner, target=None, load_host=local_host, test="cpu",
        options={"time": 0, "events": 200, "report-interval": 0}, threads=[1],
    )  # fmt: skip

    launched = benchdash("--format", "json", "launch", str(plan.pk))

    assert launched.returncode == 0, launched.stderr
    told = json.loads(launched.stdout)
    batch = plan.batches.get()
    assert told["batch"]["id"] == batch.pk and batch.launched_by == "cli"
    assert told["batch"]["launched_by"] == "cli" and told["exit_code"] == 0
    client.force_login(owner)
    page = client.get(f"/plans/{plan.pk}/history?launched=cli").content.decode()
    assert [n["batch"] for n in chart_of(page)["nights"]] == [batch.pk]
    assert '<option value="cli" selected>from the command</option>' in page
    api = client.get(f"/api/v1/plans/{plan.pk}/history?launched=cli").json()["nights"]
    assert [(n["batch"], n["launched_by"]) for n in api] == [(batch.pk, "cli")]

    # No worker runs it: at the timeout it is cancelled, and the JSON says its state then.
    timed = benchdash("--format", "json", "--timeout", "0", "--poll", "0.1", "wait", str(batch.pk))

    assert timed.returncode == 3, timed.stderr
    body = json.loads(timed.stdout)
    assert (body["answer"], body["exit_code"], body["timed_out"]) == ("could not tell", 3, True)
    assert f"batch {batch.pk} still queued after 0 s; cancelled" in body["reason"]
    assert body["batch"]["id"] == batch.pk and body["batch"]["status"] == "cancelled"
    assert body["batch"]["runs_total"] == 1 and body["batch"]["runs_skipped"] == 1
    assert body["batch"]["url"].endswith(f"/batches/{batch.pk}/")
    assert "cancelled, so that it does not hold the worker" in timed.stderr


def test_every_exit_code_comes_with_a_json_answer_when_asked(benchdash, flush_plan):
    failed = stored.bare_batch(flush_plan, status="failed", error="refused")
    done = stored.finished_batch(flush_plan, (1,), 4, 10, None)

    answers = {
        "not slower": benchdash("--format", "json", "wait", str(done.pk)),
        "slower": benchdash("--format", "json", "--baseline", "1", "wait", str(done.pk)),
        "failed": benchdash("--format", "json", "wait", str(failed.pk)),
        "no token": benchdash("--format", "json", "wait", str(done.pk), token=None),
        "wrong token": benchdash("--format=json", "wait", str(done.pk), token="not-a-token"),
        "no such batch": benchdash("--format", "json", "wait", "999999"),
        "bad argument": benchdash("--format", "json", "wait", "seven"),
    }

    codes = {name: (done.returncode, json.loads(done.stdout)) for name, done in answers.items()}
    assert {name: code for name, (code, _) in codes.items()} == {
        "not slower": 0, "slower": 1, "failed": 2, "no token": 3, "wrong token": 3,
        "no such batch": 3, "bad argument": 3,
    }  # fmt: skip
    for name, (code, body) in codes.items():
        assert body["exit_code"] == code, name
    assert codes["wrong token"][1]["reason"].endswith("HTTP 401 Invalid token.")
    assert "invalid int value" in codes["bad argument"][1]["reason"]
    assert codes["no such batch"][1]["timed_out"] is False
