"""The run models moved to the runs app (runs 0001): the same table, so the state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0001_initial'),
        ('workers', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.AlterField(
                model_name='runlease',
                name='run',
                field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='lease', serialize=False, to='runs.run'),
            ),
            migrations.AlterField(
                model_name='snapshot',
                name='run',
                field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='snapshots', to='runs.run'),
            ),
        ]),
    ]
