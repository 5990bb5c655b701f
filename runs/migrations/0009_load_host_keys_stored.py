"""A load host's key is the one stored, encrypted, with it: the key file on the worker
(`key_path`) is gone, because any user could name a colleague's key file (issue 26).

What an operator must do: for each load host this migration names, paste its private key
on the host's page (Edit) or send it as `private_key` through the API. Until then the host
has no key and the worker refuses to log in with it ("has no private key"). The key files
themselves are not read here (a migration reading arbitrary files is the hole itself) and
are left on the worker's disk untouched.
"""

import sys

from django.db import migrations


def name_hosts_losing_their_key_file(apps, schema_editor):
    LoadHost = apps.get_model("runs", "LoadHost")
    for name, key_path in LoadHost.objects.exclude(key_path="").values_list("name", "key_path"):
        sys.stdout.write(
            f"\n  load host {name!r} named the key file {key_path}: no longer used; "
            "paste its private key on its page unless one is stored"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0008_telemetry_and_seed"),
    ]

    operations = [
        migrations.RunPython(name_hosts_losing_their_key_file, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="loadhost",
            name="key_path",
        ),
    ]
