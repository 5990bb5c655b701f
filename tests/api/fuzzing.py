"""schemathesis against benchdash's API with every check it has: the quick run of the test
suite (tests/api/test_schema.py) and the long run (bench/schema_fuzz.py) share this.

The run is schemathesis's own command line, as a script author would use it, against a
server on the test database: every phase (examples, coverage, fuzzing, stateful), every
check, a fixed seed and deterministic generation, one worker. What it finds is read from
its JSON report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.utils import timezone

from runs.models import Batch, LoadHost, Plan, Sample, Target

SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
SEED = 17
ALL_PHASES = "examples,coverage,fuzzing,stateful"

# Left out of the run, and why.
EXCLUDED = {
    "plans_launch": "it queues a real batch for a worker",
    "tokens_destroy": "the stateful phase would revoke the very token the run uses",
    "health": "a 503 while beat does not beat, as here (tests/api/test_health.py checks it)",
}

# Operations whose answer to well-formed input can be a 400 the schema cannot foresee: the
# refusal depends on other objects, on several fields at once or on a host's answer, and
# names the field at fault. Elsewhere a 400 to schema-valid input is a failure.
REFUSED_FOR_STATE = {
    "targets_create": "a host or a socket, not both; a server host that exists",
    "targets_update": "the same",
    "targets_partial_update": "the same",
    "load_hosts_create": "an SSH load host needs an address",
    "load_hosts_update": "the same",
    "load_hosts_partial_update": "the same",
    "load_hosts_scan": "only SSH load hosts, and the host must answer",
    "load_hosts_confirm_host_key": "a key seen by a scan, and its fingerprint",
    "plans_create": "the target and load host must exist; the matrix passes the allow-lists",
    "plans_update": "the same",
    "plans_partial_update": "the same",
    "plans_preflight": "the stored load host and target must be usable",
    "plans_schedule_update": "exactly one kind of schedule, a real time zone, a time ahead",
    "imports_create": "the file must be a sysbench log",
    "scripts_create": "one of content, files or archive, which sysbench must load; a name "
    "of someone else's script is theirs",
}


# The log import's body is multipart, which cannot carry every mutation schemathesis makes
# of it: an empty array goes out as no field at all, a well-formed request. Its refusal of
# invalid data is tested in tests/api/test_errors.py instead.
NEGATIVE_UNSENDABLE = {"imports_create"}


def seed_objects(owner: Any, refused_port: int) -> dict[str, int]:
    """One object of each kind, for valid cases to reach, and an SSH load host whose port
    refuses at once, for the scan and the preflight."""
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    target = Target.objects.create(
        name="offline",
        host="127.0.0.1",
        port=1,
        database="sbtest",
        user="bench",
        created_by=owner,
    )
    ssh = LoadHost.objects.create(
        name="refusing",
        kind="ssh",
        address="127.0.0.1",
        port=refused_port,
        user="bench",
        created_by=owner,
    )
    plan = Plan.objects.create(
        name="inserts", target=target, load_host=ssh, threads=[1], created_by=owner
    )
    batch = _batch(plan)
    run = batch.runs.create(position=0, round=0, cell_key="a", threads=1)
    Sample.objects.create(run=run, seq=1, time_s=1, threads=1, tps=1.5, received_at=timezone.now())
    return {
        "targets": target.pk,
        "load_hosts": ssh.pk,
        "local_host": local.pk,
        "plans": plan.pk,
        "batches": batch.pk,
        "runs": run.pk,
    }


def _batch(plan: Plan) -> Batch:
    return Batch.objects.create(
        plan=plan,
        target=plan.target,
        load_host=plan.load_host,
        params={},
        seed=1,
        launched_by="api",
        status="done",
    )


def config_text(ids: list[int]) -> str:
    """schemathesis.toml: every check, half of the ids drawn from the objects that exist, and
    the 400s the schema cannot foresee."""
    lines = [
        'headers = { Authorization = "Token ${BENCHDASH_TOKEN}" }',
        "workers = 1",
        # Nothing carried over from an earlier run (no cache, no example database below):
        # each run is the same.
        "[cache]",
        "enabled = false",
        "[parameters]",
        '"path.id" = { dictionary = "existing", probability = 0.5 }',
        "[dictionaries.existing]",
        f"values = {sorted(set(ids))}",
        "[generation]",
        "deterministic = true",
        'database = "none"',
        "allow-x00 = true",
    ]
    for operation in sorted(REFUSED_FOR_STATE):
        lines += [
            "[[operations]]",
            f'include-operation-id = "{operation}"',
            "checks.positive_data_acceptance.expected-statuses = "
            '["2xx", "400", "401", "403", "404", "409"]',
        ]
    for operation in sorted(NEGATIVE_UNSENDABLE):
        lines += [
            "[[operations]]",
            f'include-operation-id = "{operation}"',
            # (a check named on the command line cannot be switched off per operation)
            'checks.negative_data_rejection.expected-statuses = ["2xx", "4xx"]',
        ]
    return "\n".join(lines) + "\n"


def schemathesis_run(
    *,
    base_url: str,
    token: str,
    ids: dict[str, int],
    workdir: Path,
    max_examples: int,
    timeout: float,
    phases: str = ALL_PHASES,
) -> dict[str, Any]:
    """Run schemathesis with every check; its JSON report."""
    config = workdir / "schemathesis.toml"
    config.write_text(config_text(list(ids.values())))
    report = workdir / "report.json"
    argv = [
        SCHEMATHESIS,
        "--config-file",
        str(config),
        "run",
        f"{base_url}/api/v1/schema/",
        "--checks",
        "all",
        "--phases",
        phases,
        "--max-examples",
        str(max_examples),
        "--seed",
        str(SEED),
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
    ]
    for operation in EXCLUDED:
        argv += ["--exclude-operation-id", operation]
    env = {**os.environ, "BENCHDASH_TOKEN": token}  # never on the command line
    with (workdir / "schemathesis.log").open("wb") as log:
        subprocess.run(
            argv, env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, timeout=timeout
        )
    result: dict[str, Any] = json.loads(report.read_text())
    return result


def failures_by_check(report: dict[str, Any]) -> dict[str, int]:
    return {f"{f['code']} {f['title']}": f["count"] for f in report["failures"]}
