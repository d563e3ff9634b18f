"""Connectors' stored secrets encrypted at rest (connectors/secrets.py): each stored value,
plaintext until now, becomes a Fernet token under DBSPWEB_SECRETS_KEY (or the key derived
from SECRET_KEY). Reversible: the tokens are decrypted back."""
from django.db import migrations


def encrypt(apps, schema_editor):
    from connectors.secrets import seal

    Connector = apps.get_model("connectors", "Connector")
    for connector in Connector.objects.only("pk", "secrets"):
        if connector.secrets:
            Connector.objects.filter(pk=connector.pk).update(secrets=seal(connector.secrets))


def decrypt(apps, schema_editor):
    from connectors.secrets import unseal

    Connector = apps.get_model("connectors", "Connector")
    for connector in Connector.objects.only("pk", "secrets"):
        if connector.secrets:
            Connector.objects.filter(pk=connector.pk).update(secrets=unseal(connector.secrets))


class Migration(migrations.Migration):

    dependencies = [
        ('connectors', '0004_dead_letters_lag_pause'),
    ]

    operations = [migrations.RunPython(encrypt, decrypt)]
