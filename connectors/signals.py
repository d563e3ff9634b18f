"""A new run gets the connectors its version's document declares (connectors/declared.py),
in the transaction that creates it."""
from __future__ import annotations

from django.db.models.signals import post_save
from django.dispatch import receiver

from runs.models import Run

from .declared import create_for_run


@receiver(post_save, sender=Run, dispatch_uid="connectors-declared-on-start")
def run_created(sender, instance: Run, created: bool, raw: bool = False, **kwargs) -> None:
    if created and not raw:
        create_for_run(instance)
