"""Credentials stored before restarts' options held settings only (issue 46): a plan's
restart-only settings and config snippets, the copy a batch froze at launch, the settings
each run asked for and read back, may hold a password (`password = …`,
`wsrep_sst_auth = root:…`) that the plan's page and the API showed. Their values are
hidden here (`********`), their names and the rest kept as they were; each row changed is
a warning line in the log. A plan that still names one is refused at its next launch,
naming the line. Nothing is undone by migrating backwards: the values are gone.
"""

import logging

from django.db import migrations

from runs.credentials import settings_hidden, snippet_hidden

logger = logging.getLogger("runs.migrations.credentials")


def axes_hidden(params: dict) -> dict:
    """A plan's or a frozen batch's parameters with their credentials hidden."""
    hidden = dict(params)
    if isinstance(params.get("server_settings"), dict):
        hidden["server_settings"] = settings_hidden(params["server_settings"])
    axes = params.get("server_axes")
    if isinstance(axes, dict) and isinstance(axes.get("configs"), list):
        hidden["server_axes"] = {
            **axes,
            "configs": [
                {**c, "text": snippet_hidden(c["text"])}
                if isinstance(c, dict) and isinstance(c.get("text"), str)
                else c
                for c in axes["configs"]
            ],
        }
    return hidden


def credentials_hidden(apps, schema_editor=None):
    """Every stored row above with its credentials hidden: how many of each changed."""
    Plan, Batch, Run = (apps.get_model("runs", m) for m in ("Plan", "Batch", "Run"))
    changed = {"plans": 0, "batches": 0, "runs": 0}
    for plan in Plan.objects.exclude(server_settings={}, server_axes={}).iterator():
        after = axes_hidden(
            {"server_settings": plan.server_settings, "server_axes": plan.server_axes}
        )
        if after != {"server_settings": plan.server_settings, "server_axes": plan.server_axes}:
            plan.server_settings, plan.server_axes = after["server_settings"], after["server_axes"]
            plan.save(update_fields=["server_settings", "server_axes"])
            logger.warning(
                "plan %s: a credential in its server settings or configs hidden", plan.name
            )
            changed["plans"] += 1
    for batch in Batch.objects.only("id", "params").iterator():
        after = axes_hidden(batch.params) if isinstance(batch.params, dict) else batch.params
        if after != batch.params:
            batch.params = after
            batch.save(update_fields=["params"])
            logger.warning(
                "batch %s: a credential in its server settings or configs hidden", batch.pk
            )
            changed["batches"] += 1
    runs = Run.objects.exclude(settings={}, verified_settings={}).only(
        "id", "settings", "verified_settings"
    )
    for run in runs.iterator():
        settings, verified = settings_hidden(run.settings), settings_hidden(run.verified_settings)
        if (settings, verified) != (run.settings, run.verified_settings):
            run.settings, run.verified_settings = settings, verified
            run.save(update_fields=["settings", "verified_settings"])
            changed["runs"] += 1
    if changed["runs"]:
        logger.warning("%d runs: a credential in their settings hidden", changed["runs"])
    return changed


class Migration(migrations.Migration):
    dependencies = [("runs", "0014_restarts_an_operators_act")]

    operations = [migrations.RunPython(credentials_hidden, migrations.RunPython.noop)]
