# Tags, a revocable share token, forked_from, and owner grants.
# The share token is added nullable, filled with a distinct token per existing circuit,
# then made unique and required (a callable default alone would give every row the same value).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import circuits.models


def fill_share_tokens(apps, schema_editor):
    Circuit = apps.get_model("circuits", "Circuit")
    for circuit in Circuit.objects.filter(share_token__isnull=True).only("pk"):
        Circuit.objects.filter(pk=circuit.pk).update(share_token=circuits.models.new_share_token())


class Migration(migrations.Migration):

    dependencies = [
        ("circuits", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Tag",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.SlugField(unique=True)),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.AddField(
            model_name="circuit",
            name="forked_from",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="forks", to="circuits.circuit"),
        ),
        migrations.AddField(
            model_name="circuit",
            name="tags",
            field=models.ManyToManyField(blank=True, related_name="circuits", to="circuits.tag"),
        ),
        migrations.AddField(
            model_name="circuit",
            name="share_token",
            field=models.CharField(editable=False, max_length=64, null=True),
        ),
        migrations.RunPython(fill_share_tokens, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="circuit",
            name="share_token",
            field=models.CharField(default=circuits.models.new_share_token, editable=False, max_length=64, unique=True),
        ),
        migrations.CreateModel(
            name="CircuitGrant",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("can_operate", models.BooleanField(default=False)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("circuit", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="grants", to="circuits.circuit")),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="circuit_grants", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["circuit", "user__username"],
                "constraints": [models.UniqueConstraint(fields=("circuit", "user"), name="unique_circuit_grant")],
            },
        ),
    ]
