"""Run, Push and TickOutput move from the circuits app to this one: the state only.

Their tables keep their names (circuits_run, circuits_push, circuits_tickoutput) and
their rows; nothing in the database changes but the content types' app label (so admin
history and permissions follow the models). circuits 0004 then drops them from the
circuits app's state, after workers 0002 pointed the leases and snapshots here.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


MODELS = ("run", "push", "tickoutput")


def _relabel(apps, schema_editor, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for model in MODELS:
        if not ContentType.objects.using(db).filter(app_label=new, model=model).exists():
            ContentType.objects.using(db).filter(app_label=old, model=model).update(app_label=new)


def move_content_types(apps, schema_editor):
    _relabel(apps, schema_editor, "circuits", "runs")


def move_content_types_back(apps, schema_editor):
    _relabel(apps, schema_editor, "runs", "circuits")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('circuits', '0003_run_queue'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name='Run',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('status', models.CharField(choices=[('created', 'Created'), ('running', 'Running'), ('paused', 'Paused'), ('stopped', 'Stopped'), ('failed', 'Failed')], default='created', max_length=16)),
                    ('current_tick', models.IntegerField(default=-1)),
                    ('last_sequence', models.IntegerField(default=0)),
                    ('worker', models.CharField(blank=True, default='', max_length=200)),
                    ('queue', models.CharField(blank=True, default='', max_length=200)),
                    ('error', models.TextField(blank=True, default='')),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('updated_at', models.DateTimeField(auto_now=True)),
                    ('circuit', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='circuits.circuit')),
                    ('created_by', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to=settings.AUTH_USER_MODEL)),
                    ('version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='runs', to='circuits.circuitversion')),
                ],
                options={
                    'db_table': 'circuits_run',
                    'ordering': ['-id'],
                },
            ),
            migrations.CreateModel(
                name='Push',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('sequence', models.PositiveIntegerField()),
                    ('input', models.CharField(max_length=64)),
                    ('records', models.JSONField()),
                    ('row_count', models.PositiveIntegerField()),
                    ('idempotency_key', models.CharField(blank=True, max_length=200, null=True)),
                    ('received_at', models.DateTimeField(auto_now_add=True)),
                    ('applied_tick', models.IntegerField(blank=True, null=True)),
                    ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='pushes', to='runs.run')),
                ],
                options={
                    'db_table': 'circuits_push',
                    'ordering': ['run', 'sequence'],
                    'indexes': [models.Index(fields=['run', 'applied_tick'], name='push_run_applied')],
                    'constraints': [models.UniqueConstraint(fields=('run', 'sequence'), name='unique_push_sequence'), models.UniqueConstraint(condition=models.Q(('idempotency_key__isnull', False)), fields=('run', 'idempotency_key'), name='unique_push_idempotency_key')],
                },
            ),
            migrations.CreateModel(
                name='TickOutput',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('tick', models.IntegerField()),
                    ('deltas', models.JSONField()),
                    ('frontier', models.JSONField(default=dict)),
                    ('stats', models.JSONField(default=dict)),
                    ('ms', models.FloatField(default=0)),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='ticks', to='runs.run')),
                ],
                options={
                    'db_table': 'circuits_tickoutput',
                    'ordering': ['run', 'tick'],
                    'constraints': [models.UniqueConstraint(fields=('run', 'tick'), name='unique_run_tick')],
                },
            ),
        ]),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
