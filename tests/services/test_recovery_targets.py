"""The sweeper over a servers axis: a batch whose worker died, or whose target was away at
its end, gets every target's original settings back, not only its first's."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from runs.models import Batch, Status, Target
from runs.services import recovery
from tests.helpers import global_variable, server_variable
from tests.stored import bare_batch

FLUSH = "innodb_flush_log_at_trx_commit"


def test_the_sweeper_puts_back_every_targets_settings(
    make_plan, target, mariadb_server, mariadb_nobinlog_server
):
    second = Target.objects.create(
        name="second-mariadb", engine="mariadb", host="127.0.0.1",
        port=mariadb_nobinlog_server.port, database="mysql",
        user=mariadb_nobinlog_server.user, password=mariadb_nobinlog_server.password,
    )  # fmt: skip
    originals = {
        "first": global_variable(mariadb_server, FLUSH),
        "second": global_variable(mariadb_nobinlog_server, FLUSH),
    }
    changed = {"0": "2", "1": "2", "2": "0"}
    axis = [{"id": target.pk, "name": target.name}, {"id": second.pk, "name": second.name}]
    now = timezone.now()
    batch = bare_batch(
        make_plan(),
        params={"test": "oltp_insert", "targets": axis},
        status=Status.FAILED,
        started_at=now - timedelta(minutes=2),
        finished_at=now - timedelta(minutes=1),
        original_settings={FLUSH: originals["first"]},
        put_back={str(second.pk): {"original_settings": {FLUSH: originals["second"]}}},
    )
    # Both servers left as the batch's cells set them (its target was away at its end).
    with (
        server_variable(mariadb_server, FLUSH, changed[originals["first"]]),
        server_variable(mariadb_nobinlog_server, FLUSH, changed[originals["second"]]),
    ):
        assert recovery.batches_restore_left_settings() == [batch.pk]

        assert global_variable(mariadb_server, FLUSH) == originals["first"]
        assert global_variable(mariadb_nobinlog_server, FLUSH) == originals["second"]
        batch = Batch.objects.get(pk=batch.pk)
        assert batch.settings_restored_at is not None
        assert batch.put_back[str(second.pk)]["settings_restored_at"]
        assert recovery.batches_restore_left_settings() == []  # once
