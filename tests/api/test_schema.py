"""schemathesis against the generated OpenAPI schema, with every check it has (server
errors, status codes, content types, headers and bodies against the schema, invalid data
refused, valid data accepted, use after free, resources available after creation, auth not
ignored...), every phase, valid and invalid input, and a valid token. The scan and the
preflight run against an SSH load host whose port refuses at once. Deterministic and
capped; bench/schema_fuzz.py runs the same for much longer."""

from __future__ import annotations

import pytest

from tests.api.fuzzing import failures_by_check, schemathesis_run, seed_objects

# The coverage phase (a thousand and more boundary cases, whatever the cap) runs in the long
# run only: bench/schema_fuzz.py.
QUICK_PHASES = "examples,fuzzing,stateful"


@pytest.mark.timeout(300)
def test_the_api_keeps_to_its_schema_under_every_check(
    asgi_server, owner, owner_token, free_port, tmp_path
):
    ids = seed_objects(owner, refused_port=free_port)
    report = schemathesis_run(
        base_url=asgi_server.url,
        token=owner_token,
        ids=ids,
        workdir=tmp_path,
        phases=QUICK_PHASES,
        max_examples=12,
        timeout=240,
    )
    log = (tmp_path / "schemathesis.log").read_text()
    assert report["complete"], log[-3000:]
    assert report["errors"] == [], log[-3000:]
    assert failures_by_check(report) == {}, log[-20000:]
    # Every operation but the excluded ones was tried, each with many cases.
    assert report["operations"]["tested"] == report["operations"]["selected"] >= 30
    assert report["test_cases"]["generated"] >= 500, report["test_cases"]
