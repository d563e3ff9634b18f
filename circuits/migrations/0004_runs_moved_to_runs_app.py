"""Run, Push and TickOutput now belong to the runs app (runs 0001 took them over, with
their tables and rows): drop them from this app's state; the database is untouched."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('circuits', '0003_run_queue'),
        ('runs', '0001_initial'),
        ('workers', '0002_run_in_runs_app'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.DeleteModel(name='TickOutput'),
            migrations.DeleteModel(name='Push'),
            migrations.DeleteModel(name='Run'),
        ]),
    ]
