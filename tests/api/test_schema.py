"""schemathesis against the generated OpenAPI schema, with a valid token: no 500 and no
response that breaks the schema, for valid and for invalid input. Operations that start
real work (launch, preflight, cancel) or reach out to a host (scan) are left out; the
examples are capped and derandomized, so the run is repeatable and fast."""

from __future__ import annotations

from collections import Counter

import pytest
import schemathesis
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import response_schema_conformance

from runs.models import LoadHost, Plan, Run, Sample

STARTS_WORK = ["plans_launch", "plans_preflight", "batches_cancel", "load_hosts_scan"]
CHECKS = [not_a_server_error, response_schema_conformance]


@pytest.fixture
def existing_ids(owner, offline_target, make_batch) -> dict[str, int]:
    """One object of each kind, so that valid cases also reach objects that exist; the
    token's user owns them, so that writes get past the permission check."""
    load_host = LoadHost.objects.create(
        name="lg", kind="ssh", address="127.0.0.1", user="bench", created_by=owner
    )
    plan = Plan.objects.create(
        name="inserts", target=offline_target, load_host=load_host, threads=[1], created_by=owner
    )
    batch = make_batch(plan, status="done")
    run = Run.objects.create(batch=batch, position=0, round=0, cell_key="a", threads=1)
    Sample.objects.create(run=run, seq=1, time_s=1, threads=1, tps=1.5, received_at=timezone.now())
    return {
        "/api/v1/targets/": offline_target.pk,
        "/api/v1/load-hosts/": load_host.pk,
        "/api/v1/plans/": plan.pk,
        "/api/v1/batches/": batch.pk,
        "/api/v1/runs/": run.pk,
    }


@pytest.mark.timeout(900)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_api_keeps_to_its_schema(api, existing_ids, mode):
    headers = {"Authorization": api.session.headers["Authorization"]}
    schema = schemathesis.openapi.from_url(f"{api.base_url}/api/v1/schema/", headers=headers)
    results = list(schema.exclude(operation_id=STARTS_WORK).get_all_operations())
    assert all(isinstance(r, Ok) for r in results), results
    operations = [r.ok() for r in results if isinstance(r, Ok)]
    assert len(operations) >= 25
    answered: Counter[str] = Counter()

    for operation in operations:
        known = [i for prefix, i in existing_ids.items() if operation.path.startswith(prefix)]
        positive = mode == GenerationMode.POSITIVE
        fixed = {"id": known[0]} if positive and known and "{id}" in operation.path else None

        @given(case=operation.as_strategy(generation_mode=mode, path_parameters=fixed))
        @settings(
            max_examples=10,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        def keeps_to_the_schema(case: schemathesis.Case) -> None:
            response = case.call_and_validate(base_url=api.base_url, headers=headers, checks=CHECKS)
            if response.status_code < 300:
                answered[case.operation.label] += 1

        try:
            keeps_to_the_schema()
        except Unsatisfiable:
            # Nothing in this operation can be made invalid (no parameter, no body).
            assert mode == GenerationMode.NEGATIVE, operation.label

    if mode == GenerationMode.POSITIVE:
        # Valid input reaches the real work, not only a 400 or a 404: every read (a plan
        # without a schedule has none) and most writes.
        reads = {o.label for o in operations if o.method == "get" and "schedule" not in o.path}
        assert reads <= set(answered), sorted(reads - set(answered))
        assert len(answered) >= 20, sorted(answered)
