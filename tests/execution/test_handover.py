"""The ending a worker's handover gives its batch: the outage with its real length, exact
when the results database was restarted, a bound when it was only unreachable."""

from __future__ import annotations

from datetime import UTC, datetime

from runs.execution.outages.handover import Handover

STARTED = datetime(2026, 11, 25, 18, 0, 0, tzinfo=UTC)


def left(**changes: object) -> Handover:
    fields: dict[str, object] = {
        "outage_started": STARTED.isoformat(),
        "outage_error": "connection refused",
        "gave_up_at": datetime(2026, 11, 25, 18, 0, 24, tzinfo=UTC).isoformat(),
        "limit_s": 6.0,
        "settings_restored_at": datetime(2026, 11, 25, 18, 0, 7, tzinfo=UTC).isoformat(),
    }
    return Handover(**{**fields, **changes})  # type: ignore[arg-type]


def test_a_restarted_database_is_told_with_its_exact_length():
    cause = left().cause(datetime(2026, 11, 25, 18, 1, 14, tzinfo=UTC), restarted=True)
    assert cause.startswith(
        "the results database was unreachable from 18:00:00 to 18:01:14 UTC "
        "(74 s: connection refused); the worker gave up waiting for it at 18:00:24 UTC"
    )
    assert "settings restored" in cause


def test_a_database_that_was_only_unreachable_is_told_with_a_bound():
    cause = left(settings_restored_at=None).cause(
        datetime(2026, 11, 25, 18, 2, 0, tzinfo=UTC), restarted=False
    )
    assert "from 18:00:00 UTC until 18:02:00 UTC at the latest (120 s at most" in cause
    assert "settings not restored (the sweeper tries)" in cause
