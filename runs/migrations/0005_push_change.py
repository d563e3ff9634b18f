"""The input log stores each validated change as Arrow IPC bytes (Push.change); the
JSON records of pushes logged before stay readable in the same column as before
(`records`, now nullable; the model calls the field `records_json`)."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("runs", "0004_inspections"),
    ]

    operations = [
        migrations.AlterField(model_name="push", name="records", field=models.JSONField(null=True, blank=True)),
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RenameField(model_name="push", old_name="records", new_name="records_json"),
            migrations.AlterField(model_name="push", name="records_json",
                                  field=models.JSONField(null=True, blank=True, db_column="records")),
        ]),
        migrations.AddField(model_name="push", name="change", field=models.BinaryField(null=True, blank=True)),
    ]
