from django.db import migrations


def create_local(apps, schema_editor):
    LoadHost = apps.get_model("runs", "LoadHost")
    LoadHost.objects.get_or_create(name="local", defaults={"kind": "local", "port": 0})


class Migration(migrations.Migration):
    dependencies = [("runs", "0001_initial")]
    operations = [migrations.RunPython(create_local, migrations.RunPython.noop)]
