"""Every kind of plan the API makes, opened in the editor and saved unchanged, reads back
from the API as it was written, field by field (issue 47: a restart-only setting axis
came back as server_settings {}, and the next launch measured one cell)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from runs.models import LoadHost, LuaScript, Target
from tests.web.test_setup_pages import _FormReader

MANAGED = {"installs": [{"label": "10.11", "basedir": "/usr", "datadir": "/srv/mariadb"},
                        {"label": "11.4", "basedir": "/opt/mariadb-11.4",
                         "datadir": "/srv/mariadb-11.4"}],
           "timeout_s": 60}  # fmt: skip
# Left out of the comparison: moments, not fields a user writes.
NOT_WRITTEN = {"updated_at"}


class _PageForm(_FormReader):
    """The fields as a browser posts them: a textarea loses the one newline after its
    start tag, and its lines end in CRLF."""

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        if tag == "textarea" and self.inside:
            self.textareas = getattr(self, "textareas", set()) | {dict(attrs).get("name")}


def page_post(page: str) -> dict[str, list[str]]:
    reader = _PageForm("plan-editor")
    reader.feed(page)
    posted: dict[str, list[str]] = {}
    for name, value in reader.fields:
        if name in getattr(reader, "textareas", ()):
            value = value.removeprefix("\n").replace("\n", "\r\n")
        posted.setdefault(name, []).append(value)
    return posted


@pytest.fixture
def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def kinds(stored_target, user) -> dict[str, dict[str, Any]]:
    """Every kind of plan the API can make, by name."""
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    managed = Target.objects.create(
        name="db-r", engine="mariadb", host="127.0.0.1", port=3998, database="sbtest",
        user="bench", created_by=user, restart_mode="managed", restart_config=MANAGED,
    )  # fmt: skip
    second = Target.objects.create(
        name="db-r2", engine="mariadb", host="127.0.0.1", port=3997, database="sbtest",
        user="bench", created_by=user, restart_mode="managed", restart_config=MANAGED,
    )  # fmt: skip
    ssh = [
        LoadHost.objects.create(
            name=f"lg{i}", kind="ssh", address=f"10.0.0.{i}", user="bench", created_by=user
        )
        for i in (1, 2, 3)
    ]
    script = LuaScript.objects.create(name="mine", content="function event() end\n")
    base = {
        "name": "every field", "target": stored_target.pk, "load_host": local.pk,
        "test": "oltp_insert", "options": {"time": 2, "tables": 1, "table-size": 100},
        "threads": [1, 2], "server_settings": {"innodb_flush_log_at_trx_commit": ["1", "2"]},
    }  # fmt: skip
    # fmt: off
    return {
        "plain": {
            **base,
            "server_settings": {"innodb_flush_log_at_trx_commit": ["2", "1"],
                                "sync_binlog": ["1", "0"], "innodb_io_capacity": ["200", "2000"]},
            "repeats": 4, "warmup_s": 1, "order_policy": "ramp",
            "dataset_policy": "fresh", "cleanup": False, "seed": 4242, "quiet_wait_s": 5,
            "notify_emails": "a@example.com\nb@example.com",
            "notify_webhook": "http://localhost:8000/hooks/bench",
            "regression_threshold_pct": 7.5, "history_nights": 9,
            "options": {"time": 3, "tables": 2, "table-size": 500, "percentile": 99,
                        "report-interval": 2, "histogram": "off"},
        },
        "tests axis": {
            **base,
            "test": "oltp_point_select",
            "tests": [
                {"test": "oltp_point_select", "options": {"tables": 2}, "family": "point",
                 "name": "point-select"},
                {"test": "oltp_insert", "options": {}, "family": "write", "rebuild": True},
            ],
        },
        "option axes": {
            **base, "test": "oltp_read_only",
            "option_axes": {"tables": [1, 4], "range-size": [10, 100]},
            "options": {"time": 2, "table-size": 100},
        },
        "repeats auto": {
            **base, "auto": {"repeats": {"target_pct": 3.0, "max": 7, "margin_pct": 1.5}}
        },
        "threads auto": {
            **base, "threads": [1],
            "auto": {"threads": {"max": 16, "slo_p95_ms": 40.0, "rise_pct": 8.0}},
        },
        "rate auto": {
            **base,
            "auto": {"rate": {"start": 50, "max": 5000, "slo_p95_ms": 20.0,
                              "tolerance_pct": 3.0, "precision_pct": 20.0}},
        },
        "ramp held": {
            **base, "order_policy": "ramp", "threads": [1, 2, 4],
            "auto": {"hold": {"last_level_s": 30}},
        },
        "restart-only settings": {
            **base, "target": managed.pk,
            "server_settings": {"innodb_log_buffer_size": ["16M", "32M"]},
        },
        "servers": {
            **base, "target": managed.pk, "server_settings": {},
            "servers": {
                "targets": [second.pk],
                "installs": ["11.4", "10.11"],
                "configs": [
                    {"label": "b1e1",
                     "text": "innodb_flush_log_at_trx_commit = 1\nsync_binlog = 1\n"},
                    {"label": "b0e0", "text": "  innodb_flush_log_at_trx_commit = 0"},
                ],
                "after_restart": "cold",
                "warm_s": 5,
            },
        },
        "servers warm": {
            **base, "target": managed.pk,
            "servers": {"configs": [{"label": "a", "text": "sync_binlog = 0"},
                                    {"label": "b", "text": ""}], "after_restart": "warm",
                        "warm_s": 30},
        },
        "two targets": {**base, "servers": {"targets": [second.pk]}},
        "extra load hosts": {
            **base, "load_host": ssh[0].pk, "extra_load_hosts": [ssh[2].pk, ssh[1].pk],
            "load_split": "each", "threads": [4, 8],
        },
        "script": {
            **base, "test": "oltp_read_write", "script": script.pk,
            "options": {"time": 2}, "dataset_policy": "existing",
        },
    }
    # fmt: on


@pytest.mark.parametrize(
    "kind",
    ["plain", "tests axis", "option axes", "repeats auto", "threads auto", "rate auto",
     "ramp held", "restart-only settings", "servers", "servers warm", "two targets",
     "extra load hosts"],
)  # fmt: skip
def test_a_plan_saved_unchanged_in_the_editor_reads_back_as_written(kind, kinds, api_as, client_in):
    _saved_unchanged(kind, kinds, api_as, client_in)


def test_a_plan_of_a_custom_script_saved_unchanged_reads_back_as_written(kinds, api_as, client_in):
    # Its own test: checking the script runs sysbench (the servers tier).
    _saved_unchanged("script", kinds, api_as, client_in)


def _saved_unchanged(kind: str, kinds, api_as: APIClient, client_in) -> None:
    created = api_as.post("/api/v1/plans", kinds[kind], format="json")
    assert created.status_code == 201, created.content
    written = api_as.get(f"/api/v1/plans/{created.json()['id']}").json()

    page = client_in.get(f"/plans/{written['id']}/").content.decode()
    saved = client_in.post(f"/plans/{written['id']}/", {**page_post(page), "action": "save"})

    assert saved.status_code == 302, _errors(saved.content.decode())
    read = api_as.get(f"/api/v1/plans/{written['id']}").json()
    for field in sorted(set(written) - NOT_WRITTEN):
        assert read[field] == written[field], f"{kind}: {field}"


def test_the_editor_shows_a_restart_only_setting_it_has_no_checkbox_for(kinds, api_as, client_in):
    created = api_as.post("/api/v1/plans", kinds["restart-only settings"], format="json").json()

    posted = page_post(client_in.get(f"/plans/{created['id']}/").content.decode())

    assert (posted["setting_name_0"], posted["setting_values_0"]) == (
        ["innodb_log_buffer_size"],
        ["16M,32M"],
    )


def _errors(page: str) -> str:
    start = page.find("errorlist")
    return page[start - 200 : start + 800] if start >= 0 else page[:500]
