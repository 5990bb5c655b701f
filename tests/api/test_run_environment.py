"""A run's environment is that run's: a batch over innodb_flush_log_at_trx_commit 1 and 2 on
the private MariaDB, run by a real worker. Each run records the server variables it saw
differ from the batch's snapshot once its settings were applied (read back with the
verification), and the API and the run page show the run's own values."""

from __future__ import annotations

import pytest
from django.test import Client

from runs.models import Batch, Status
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

FLUSH = "innodb_flush_log_at_trx_commit"


def test_each_run_carries_the_server_variables_its_settings_made(
    api, celery_worker, make_plan, django_user_model, owner, target
):
    target.created_by = owner  # the token's user may launch with it
    target.save()
    plan = make_plan(
        name="flush sweep",
        options={"time": 1, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 20},
        server_settings={FLUSH: ["1", "2"]},
        order_policy="ramp",
        created_by=owner,
    )
    launched = api.post(f"/api/v1/plans/{plan.pk}/launch")
    assert launched.status_code == 201, launched.text
    batch = wait_for_batch(Batch.objects.get(pk=launched.json()["id"]))
    assert batch.status == Status.DONE, batch.error
    snapshot = batch.environment["server"]["variables"][FLUSH]

    runs = api.get(f"/api/v1/batches/{batch.pk}/runs").json()["results"]
    assert sorted(r["settings"][FLUSH] for r in runs) == ["1", "2"]
    for listed in runs:
        run = api.get(f"/api/v1/runs/{listed['id']}").json()
        value = run["verified_settings"][FLUSH]
        assert run["environment"]["server"]["variables"][FLUSH] == value
        assert run["changed_variables"] == ({FLUSH: value} if value != snapshot else {})
        # The rest of the environment is the batch's.
        assert run["environment"]["load_host"] == batch.environment["load_host"]
        assert run["environment"]["server"]["version"] == batch.environment["server"]["version"]

    # The run page shows the value the run ran with, next to the batch's.
    changed = next(r for r in runs if r["settings"][FLUSH] != snapshot)
    browser = Client()
    browser.force_login(django_user_model.objects.create_user("viewer"))
    page = browser.get(f"/runs/{changed['id']}/").content.decode()
    value = changed["settings"][FLUSH]
    row = (
        f'<td class="mono">{FLUSH}</td><td class="mono">{snapshot}</td>'
        f'<td class="mono">{value}</td>'
    )
    assert row in page
