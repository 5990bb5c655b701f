"""A prepared-statement test beyond the server's max_prepared_stmt_count, end to end: the
preflight warns, the run fails with error 1461 and its hint, and the plan's own
max_prepared_stmt_count setting lets the same run through (and is put back after)."""

from __future__ import annotations

import pytest

from runs.models import Status
from runs.services import batches
from runs.services.plans import plan_preflight
from tests.helpers import global_variable, server_variable, wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

# 2 threads x 4 tables of oltp_read_write prepare 2 x (2 + 9 x 4) = 76 statements.
OPTIONS = {"time": 2, "report-interval": 1, "tables": 4, "table-size": 100}


def test_a_plans_max_prepared_stmt_count_lets_a_run_that_failed_with_1461(
    celery_worker, make_plan, mariadb_server
):
    plan = make_plan(test="oltp_read_write", options=OPTIONS, threads=[2])
    with server_variable(mariadb_server, "max_prepared_stmt_count", "60"):
        warning = {c.check: c for c in plan_preflight(plan=plan).checks}["prepared_statements"]
        assert warning.status == "warning"
        assert "set max_prepared_stmt_count=76 or more in the plan's server settings" in (
            warning.message
        )

        failed = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))
        run = failed.runs.get()
        assert run.status == Status.FAILED
        assert "1461" in run.error and "max_prepared_stmt_count" in run.error
        assert "max_prepared_stmt_count in the plan's server settings" in run.error_hint

        plan.server_settings = {"max_prepared_stmt_count": ["76"]}
        plan.save()
        done = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))
        run = done.runs.get()
        assert done.status == Status.DONE, (done.error, run.error)
        assert run.status == Status.DONE
        assert run.verified_settings == {"max_prepared_stmt_count": "76"}
        assert run.summary["transactions"] > 0
        assert global_variable(mariadb_server, "max_prepared_stmt_count") == "60"
