"""Opting a server into restarts is an operator's act (issue 46): the permission
runs.manage_restarts, and the targets opted in before it checked.

- A target opted in (restart_mode not empty) whose owner is not staff, not a superuser
  and holds no runs.manage_restarts (directly or through a group) loses its opt-in
  (restart_mode "", restart_config {}). Targets without an owner (made in the admin, or
  whose owner was deleted) were staff's to change: they keep theirs.
- A service whose command is an argv (the old form) is named again after the operator's
  command that gives exactly that argv (BENCHDASH_RESTART_COMMANDS at the time of the
  migration: {"command": name, "values": {...}}); with none, it loses its opt-in.

Each target changed is a warning line in the log, naming the target, its owner and what
to do. Nothing is undone by migrating backwards.
"""

import logging

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import Q

from runs.execution.restarts.allowed import OperatorSettingError, allowed_parse, template_values

logger = logging.getLogger("runs.migrations.restarts")


def opt_ins_checked(apps, schema_editor=None):
    """Both rules above, on every opted-in target: the names of those changed."""
    Target = apps.get_model("runs", "Target")
    changed = []
    for target in Target.objects.exclude(restart_mode="").select_related("created_by"):
        owner = target.created_by
        if owner is not None and not _may_manage_restarts(apps, owner):
            logger.warning(
                "target %s: restarts turned off: its owner %s may not opt servers into "
                "restarts (runs.manage_restarts); staff or a user with it may opt it in again",
                target.name, owner.get_username(),
            )  # fmt: skip
            _revoke(target)
            changed.append(target.name)
        elif target.restart_mode == "service" and isinstance(
            target.restart_config.get("command"), list
        ):
            _named_again(target)
            changed.append(target.name)
    return changed


def _may_manage_restarts(apps, user) -> bool:
    if user.is_staff or user.is_superuser:
        return True
    Permission = apps.get_model("auth", "Permission")
    granted = Permission.objects.filter(codename="manage_restarts", content_type__app_label="runs")
    return granted.filter(Q(user=user) | Q(group__user=user)).exists()


def _named_again(target) -> None:
    argv = target.restart_config["command"]
    for name, template in _operator_commands().items():
        values = template_values(template, argv)
        if values is not None:
            target.restart_config = {**target.restart_config, "command": name, "values": values}
            target.save(update_fields=["restart_config"])
            logger.warning(
                "target %s: its restart command is now the operator's %s", target.name, name
            )
            return
    logger.warning(
        "target %s (owner %s): restarts turned off: its restart command %s is none the "
        "operator allowed; an operator adds it to BENCHDASH_RESTART_COMMANDS, then opts it in",
        target.name, _owner(target), " ".join(map(str, argv)),
    )  # fmt: skip
    _revoke(target)


def _operator_commands() -> dict[str, tuple[str, ...]]:
    try:
        return dict(allowed_parse(settings.BENCHDASH_RESTART_COMMANDS, [], []).commands)
    except OperatorSettingError as e:
        logger.warning("%s: no restart command is named again", e)
        return {}


def _revoke(target) -> None:
    target.restart_mode, target.restart_config = "", {}
    target.save(update_fields=["restart_mode", "restart_config"])


def _owner(target) -> str:
    return target.created_by.get_username() if target.created_by is not None else "none"


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0013_servers_tests_and_bundles"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="target",
            options={
                "ordering": ["name"],
                "permissions": [("manage_restarts", "May opt servers into restarts by benchdash")],
            },
        ),
        migrations.AlterField(
            model_name="target",
            name="restart_config",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text='How it is restarted. managed: {"installs": [{"label": "10.11", "basedir": ..., "datadir": ..., "config": ...}]}; service: {"command": "systemd", "values": {"unit": "mariadb"}, "include": "/etc/mysql/conf.d/99-benchdash.cnf"}: a command the operator allowed (BENCHDASH_RESTART_COMMANDS), its placeholders\' values one word each, the include inside an operator\'s folder. Setting or changing it needs runs.manage_restarts.',
            ),
        ),
        migrations.AlterField(
            model_name="target",
            name="restart_mode",
            field=models.CharField(
                blank=True,
                choices=[
                    ("", "Never restarted by benchdash"),
                    ("managed", "A managed instance benchdash starts and stops itself"),
                    ("service", "A service with a restart command and a config include"),
                ],
                default="",
                help_text="Whether benchdash may restart this server, and how: only a target that opted in gets restart-only settings, config files or versions as axes. Setting or changing it needs runs.manage_restarts (staff have it).",
                max_length=8,
            ),
        ),
        migrations.AlterField(
            model_name="target",
            name="server_host",
            field=models.ForeignKey(
                blank=True,
                help_text="An SSH host on the database server itself, to read its cores, disks, OS, and where its restarts run. Setting or changing it needs runs.manage_restarts.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="runs.loadhost",
            ),
        ),
        migrations.RunPython(opt_ins_checked, migrations.RunPython.noop),
    ]
