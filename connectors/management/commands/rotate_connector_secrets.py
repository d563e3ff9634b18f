"""manage.py rotate_connector_secrets: every connector's stored secrets encrypted again
with the first key of DBSPWEB_SECRETS_KEY (after putting a new key first; then the old
one can be dropped). A secret no key opens is named, and left as it is."""
from django.core.management.base import BaseCommand
from django.db import transaction

from connectors.errors import ConfigError
from connectors.models import Connector
from connectors.secrets import rotate


class Command(BaseCommand):
    help = "Encrypt the connectors' stored secrets again with the first key of DBSPWEB_SECRETS_KEY."

    def handle(self, *args, **options):
        done, failed = 0, 0
        for pk, label, sealed in Connector.objects.exclude(secrets={}).values_list("pk", "name", "secrets"):
            if not sealed:
                continue
            try:
                with transaction.atomic():
                    Connector.objects.filter(pk=pk).update(secrets=rotate(sealed))
                done += 1
            except ConfigError as e:
                failed += 1
                self.stderr.write(f"connector {pk} ({label!r}): {e}")
        self.stdout.write(f"{done} connector(s) re-encrypted, {failed} left as they were")
