"""What a connector keeps outside goes when the connector does (a PostgreSQL source's
replication slot, which holds the server's WAL back): on its deletion, by the API or with
its run's circuit, once that deletion has committed. Best effort: a server away leaves
it, and docs/connectors.md says how to clean up by hand."""
from __future__ import annotations

import logging

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from .errors import ConfigError
from .kinds import Opening
from .models import Connector
from .registry import kinds

log = logging.getLogger("connectors.cleanup")


@receiver(post_delete, sender=Connector)
def _deleted(sender, instance: Connector, **kwargs) -> None:
    kind = kinds().get(instance.kind)
    if kind is None or kind.drop is None:
        return
    try:
        secrets = instance.opened_secrets()
    except ConfigError:  # a key since changed: drop without them (best effort, as the rest)
        secrets = {}
    opening = Opening(instance.run_id, instance.name, instance.node, instance.config or {}, secrets,
                      instance.position or {})
    transaction.on_commit(lambda: drop(kind, opening))


def drop(kind, opening: Opening) -> None:
    try:
        kind.drop(opening)
    except Exception:  # noqa: BLE001 - the connector is gone either way
        log.exception("event=connector_drop_failed run=%s connector=%s", opening.run_id, opening.name)
