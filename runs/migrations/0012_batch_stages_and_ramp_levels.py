"""One word per thing: a batch's prepare and cleanup records are its stages (Batch.stages),
the preflight a batch started with lists its checks (`environment.preflight.checks`, each
naming its `check`), and a ramp holds its last level (`auto.hold.last_level_s`); "step"
is kept for the change points of the nightly history."""

from django.db import migrations

# The hold's key renamed inside the stored JSON: a plan's `auto`, a batch's `params.auto`.
PLAN_HOLD = """
UPDATE runs_plan SET auto = jsonb_set(
    auto, '{hold}', (auto->'hold') - '%(old)s' || jsonb_build_object('%(new)s', auto->'hold'->'%(old)s')
) WHERE auto->'hold' ? '%(old)s'
"""
BATCH_HOLD = """
UPDATE runs_batch SET params = jsonb_set(
    params, '{auto,hold}',
    (params->'auto'->'hold') - '%(old)s'
    || jsonb_build_object('%(new)s', params->'auto'->'hold'->'%(old)s')
) WHERE params->'auto'->'hold' ? '%(old)s'
"""
# A batch's stored preflight: {"steps": [{"step": ...}]} becomes {"checks": [{"check": ...}]}.
PREFLIGHT = """
UPDATE runs_batch SET environment = jsonb_set(
    environment, '{preflight}',
    (environment->'preflight') - '%(olds)s' || jsonb_build_object('%(news)s', (
        SELECT coalesce(jsonb_agg((e - '%(old)s') || jsonb_build_object('%(new)s', e->'%(old)s')), '[]')
        FROM jsonb_array_elements(environment->'preflight'->'%(olds)s') AS e
    ))
) WHERE environment->'preflight' ? '%(olds)s'
"""
CHECKS = {"olds": "steps", "news": "checks", "old": "step", "new": "check"}
STEPS = {"olds": "checks", "news": "steps", "old": "check", "new": "step"}
FORWARD = {"old": "last_step_s", "new": "last_level_s"}
BACKWARD = {"old": "last_level_s", "new": "last_step_s"}


class Migration(migrations.Migration):
    dependencies = [("runs", "0011_run_threads_one_record")]

    operations = [
        migrations.RenameField(model_name="batch", old_name="steps", new_name="stages"),
        migrations.RunSQL(PLAN_HOLD % FORWARD, reverse_sql=PLAN_HOLD % BACKWARD),
        migrations.RunSQL(BATCH_HOLD % FORWARD, reverse_sql=BATCH_HOLD % BACKWARD),
        migrations.RunSQL(PREFLIGHT % CHECKS, reverse_sql=PREFLIGHT % STEPS),
    ]
