"""One word for the servers feature (issue 51): renames only, every row kept.

- Plan.more_targets → Plan.server_targets, through PlanTarget → PlanServer (its
  related_name plan_targets → plan_servers, its constraints plan_server_once and
  plan_server_position);
- Plan.server_axes → Plan.servers (installs, configs, after_restart, warm_s);
- Batch.servers → Batch.put_back: what benchdash changed on each target and must put back,
  not the feature;
- in every batch's frozen parameters (Batch.params), the key server_axes → servers.
  Migrating backwards names it server_axes again.
"""

from django.db import migrations, models


def _params_key_renamed(apps, old: str, new: str) -> int:
    """Batches whose frozen parameters held `old`, now under `new`: how many."""
    Batch = apps.get_model("runs", "Batch")
    changed = 0
    for batch in Batch.objects.filter(params__has_key=old).only("id", "params").iterator():
        params = dict(batch.params)
        params[new] = params.pop(old)
        batch.params = params
        batch.save(update_fields=["params"])
        changed += 1
    return changed


def params_servers(apps, schema_editor=None):
    return _params_key_renamed(apps, "server_axes", "servers")


def params_server_axes(apps, schema_editor=None):
    return _params_key_renamed(apps, "servers", "server_axes")


class Migration(migrations.Migration):
    dependencies = [("runs", "0015_stored_credentials_hidden")]

    operations = [
        migrations.RemoveConstraint(model_name="plantarget", name="plan_target_once"),
        migrations.RemoveConstraint(model_name="plantarget", name="plan_target_position"),
        migrations.RenameModel(old_name="PlanTarget", new_name="PlanServer"),
        migrations.AlterField(
            model_name="planserver",
            name="plan",
            field=models.ForeignKey(
                on_delete=models.deletion.CASCADE,
                related_name="plan_servers",
                to="runs.plan",
            ),
        ),
        migrations.AddConstraint(
            model_name="planserver",
            constraint=models.UniqueConstraint(fields=("plan", "target"), name="plan_server_once"),
        ),
        migrations.AddConstraint(
            model_name="planserver",
            constraint=models.UniqueConstraint(
                fields=("plan", "position"), name="plan_server_position"
            ),
        ),
        migrations.RenameField(
            model_name="plan", old_name="more_targets", new_name="server_targets"
        ),
        migrations.AlterField(
            model_name="plan",
            name="server_targets",
            field=models.ManyToManyField(
                blank=True,
                help_text="The servers axis's targets beyond `target`, in the user's order; "
                "`target` is the first, the baseline of the comparison.",
                related_name="+",
                through="runs.PlanServer",
                to="runs.target",
            ),
        ),
        migrations.RenameField(model_name="plan", old_name="server_axes", new_name="servers"),
        migrations.AlterField(
            model_name="plan",
            name="servers",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The servers axis beyond its targets: installs and configs restart "
                'the server (targets that opted in only): {"installs": ["10.11", "11.4"], '
                '"configs": [{"label": "odirect", "text": "innodb_flush_method=O_DIRECT"}], '
                '"after_restart": "warm", "warm_s": 10}.',
            ),
        ),
        migrations.RenameField(model_name="batch", old_name="servers", new_name="put_back"),
        migrations.RunPython(params_servers, params_server_axes),
    ]
