"""A run's threads have one record, Run.threads: Run.options no longer repeats them."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0010_nights_and_stored_answers")]

    operations = [
        migrations.RunSQL(
            "UPDATE runs_run SET options = options - 'threads'",
            reverse_sql="UPDATE runs_run SET options = options || jsonb_build_object('threads', threads)",
        ),
        migrations.AlterField(
            model_name="run",
            name="threads",
            field=models.PositiveIntegerField(help_text="The cell's threads: their one record."),
        ),
        migrations.AlterField(
            model_name="run",
            name="options",
            field=models.JSONField(
                blank=True, default=dict, help_text="sysbench options of the cell, its threads aside."
            ),
        ),
    ]
