"""A service restart runs only what the operator allows, whatever a target's row holds
(issue 46): a config stored before the checks (an argv of its own, as before migration
0014) is refused at launch, naming restart_config, and an include whose folder is a link
out of the operator's include folders fails the batch's preflight, by name: the command
never ran, no include was written, the server was never restarted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runs.errors import InvalidInput
from runs.models import Batch, Status
from runs.services import batches
from tests.execution.test_restart_service import service_instance, service_target
from tests.execution.test_restarts import make_plan
from tests.helpers import wait_for_batch
from tests.servers import PrivateMariaDB

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
CONFIGS = {"configs": [{"label": "logbuf8", "text": "innodb_log_buffer_size = 8M"}]}


@pytest.fixture
def service() -> Iterator[PrivateMariaDB]:
    yield from service_instance(PrivateMariaDB())


def restart_failure(batch) -> str:
    assert batch.status == Status.FAILED, batch.status
    assert not batch.stages or all(s["kind"] not in ("restart", "restore") for s in batch.stages)
    return str(batch.error)


def test_an_argv_stored_in_a_targets_row_never_runs(celery_worker, local_host, service, tmp_path):
    marker, include = tmp_path / "ran", service.dir / "conf.d" / "99-benchdash.cnf"
    target = service_target(service, include)
    # Written to the row directly: what the API, the pages and the admin refuse.
    target.restart_config = {**target.restart_config, "command": ["/bin/touch", str(marker)]}
    target.save()

    plan = make_plan(target, local_host, servers=CONFIGS)

    with pytest.raises(InvalidInput, match="never an argv") as refused:
        batches.batch_launch(plan=plan)

    assert refused.value.field == "restart_config"
    assert not Batch.objects.exists()
    assert not marker.exists() and not include.exists()


def test_an_include_whose_folder_links_out_of_the_operators_folders_is_never_written(
    celery_worker, local_host, service, tmp_path, settings
):
    allowed = service.dir / "allowed"
    allowed.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (allowed / "conf.d").symlink_to(outside)  # inside by its name, outside by its link
    settings.BENCHDASH_RESTART_INCLUDE_DIRS = [str(allowed)]
    target = service_target(service, allowed / "conf.d" / "99-benchdash.cnf")

    batch = wait_for_batch(batches.batch_launch(plan=make_plan(target, local_host,
                                                                servers=CONFIGS)))  # fmt: skip

    error = restart_failure(batch)
    assert f"is in {outside} on the worker's machine, outside the include folders" in error, error
    assert list(outside.iterdir()) == []
