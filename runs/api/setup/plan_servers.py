"""A plan's servers axis as the API reads and writes it: one object, `servers`, whose
targets are rows of their own (PlanServer, in the user's order) and the rest Plan.servers.
Only typed here: runs/services/restarts.py (servers_check) and plans.py check it."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from runs.api.common import JSONBody
from runs.models import Plan, Target


class ConfigSerializer(JSONBody[Any]):
    """One config of the servers axis: a snippet of the server's own config lines."""

    # A field, not Field.label: DRF's metaclass takes declared fields off the class.
    label = serializers.CharField(  # type: ignore[assignment]
        max_length=40,
        trim_whitespace=False,
        help_text="Its short name in every answer, e.g. b1e1: letters, digits, _ . + -.",
    )
    text = serializers.CharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text="The server's config lines (name = value), 16 kB at most; no includes, no "
        "file paths, no credentials.",
    )


class ServersSerializer(JSONBody[Any]):
    """The servers axis: the targets compared after `target`, and the installs and configs
    each target restarts with (targets that opted into restarts only). Every key optional;
    given, the whole object replaces the plan's."""

    targets = serializers.PrimaryKeyRelatedField(
        many=True,
        required=False,
        queryset=Target.objects.all(),
        help_text="More servers (ids) after `target`, in this order, each running every "
        "cell, interleaved round by round; `target` is the first, the baseline of the "
        "verdicts. Each must be one you may use; engines may differ, as long as every server "
        "setting of the plan exists on each.",
    )
    installs = serializers.ListField(
        child=serializers.CharField(max_length=40, trim_whitespace=False),
        required=False,
        max_length=64,
        help_text='Labels of the managed targets\' installs, the versions axis: ["10.11", "11.4"].',
    )
    configs = serializers.ListField(
        child=ConfigSerializer(),
        required=False,
        max_length=64,
        help_text='Config snippets, each a restart: [{"label": "b1e1", "text": '
        '"innodb_flush_log_at_trx_commit = 1"}].',
    )
    after_restart = serializers.ChoiceField(
        choices=["warm", "cold"],
        required=False,
        help_text="warm (the default): the cell's own load for warm_s seconds after each "
        "restart, unmeasured; cold: measured at once.",
    )
    warm_s = serializers.IntegerField(
        required=False, help_text="Seconds of warm-up after a restart, 1 to 3600 (default 10)."
    )

    def get_attribute(self, instance: Plan) -> Plan:
        return instance  # its targets are rows of their own (Plan.server_targets)

    def to_representation(self, plan: Plan) -> dict[str, Any]:
        # In the user's order (the through rows' positions), not the targets' own order.
        targets = [link.target_id for link in plan.plan_servers.all()]
        return {"targets": targets, **(plan.servers if isinstance(plan.servers, dict) else {})}
