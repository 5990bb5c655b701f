"""Restart-only settings and config snippets hold settings, never secrets: a plan whose
restart-only setting holds a credential is a 400 of the API naming the setting, whose
answer never says the value, and nothing is saved; a plan's snippets (set on the plan,
not through the API) are refused by its check the same way, by config and line, and past
16 kB, at its launch too."""

from __future__ import annotations

import pytest

from runs.errors import InvalidInput
from runs.models import Batch, Plan
from runs.services import batches, plans

SECRET = "Tr0ub4dor-in-a-snippet"


@pytest.fixture
def plan_fields(offline_target, local_host):
    offline_target.restart_mode = "managed"
    offline_target.restart_config = {
        "installs": [{"label": "10.11", "basedir": "/usr", "datadir": "/srv/m/data"}]
    }
    offline_target.save()
    return {
        "name": "snippets",
        "target": offline_target.pk,
        "load_host": local_host.pk,
        "test": "oltp_insert",
        "options": {"time": 2, "tables": 1, "table-size": 100},
        "threads": [1],
    }


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"report_password": [SECRET]}, "report_password = …: its name says it holds a credential"),
        ({"wsrep_sst_auth": [f"root:{SECRET}"]}, "wsrep_sst_auth = …: its name says"),
        (
            {"innodb_flush_method": ["fsync", f"sst:{SECRET}"]},
            "innodb_flush_method = …: its value reads as user:password",
        ),
    ],
)
def test_a_credential_in_a_restart_setting_is_a_400_that_never_says_it(
    api, plan_fields, settings, words
):
    answer = api.post("/api/v1/plans", json={**plan_fields, "server_settings": settings})

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "server_settings", answer.json()
    assert words in answer.json()["message"]
    assert SECRET not in answer.text
    assert not Plan.objects.exists()


def test_a_plans_snippet_holding_a_credential_or_past_16_kb_is_refused_by_its_check(
    plan_fields, offline_target
):
    fields = {**plan_fields, "target": offline_target, "load_host_id": plan_fields["load_host"]}
    del fields["load_host"]
    plan = Plan.objects.create(**fields)
    text = "# " + "x" * 97 + "\n"  # 100 bytes a line
    for configs, where, words in [
        (
            [{"label": "fast", "text": "innodb_flush_method = O_DIRECT"},
             {"label": "sst", "text": f"[mysqld]\nwsrep_sst_auth = root:{SECRET}\n"}],
            "configs sst",
            "config snippets hold settings, never secrets: line 2: wsrep_sst_auth = …",
        ),
        ([{"label": "p", "text": f"password {SECRET}"}], "configs p", "line 1: password = …"),
        ([{"label": "big", "text": text * 170}], "configs big", "a snippet holds 16 kB at most"),
    ]:  # fmt: skip
        plan.servers = {"configs": configs}
        with pytest.raises(InvalidInput) as refused:
            plans.plan_check(plan=plan, contact_server=False)
        assert refused.value.field == "servers.configs"
        assert refused.value.message.startswith(f"{where}: ") and words in refused.value.message
        assert SECRET not in str(refused.value)
    # A plan saved before these checks launches no batch: the launch checks it again.
    plan.servers = {"configs": [{"label": "sst", "text": f"wsrep_sst_auth = root:{SECRET}"}]}
    plan.save()
    with pytest.raises(InvalidInput, match="never secrets") as refused:
        batches.batch_launch(plan=plan)
    assert SECRET not in str(refused.value) and not Batch.objects.exists()
    plan.servers = {"configs": [{"label": "small", "text": "key_buffer_size = 8M\n" + text}]}
    assert plans.plan_check(plan=plan, contact_server=False).cells
