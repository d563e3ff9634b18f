"""Connectors declared in a circuit version's document (an input's or output's
`params.connectors`, checked by dbsp/connector_specs.py): created on each run of the
version when it starts, in the transaction that creates the run, so a run never starts
without them (docs/connectors.md, "Declaring them in the editor")."""
from __future__ import annotations

from dbsp.connector_specs import declared_in

from .models import Connector


def create_for_run(run) -> list[Connector]:
    """One connector per declaration of the run's version (the document is valid: its
    connectors were checked when it was saved and again when the run started)."""
    return Connector.objects.bulk_create([
        Connector(run=run, name=entry["name"], kind=entry["kind"], node=node, config=entry.get("config") or {},
                  secrets_env=entry.get("secrets_env") or {}, created_by=run.created_by)
        for node, entry in declared_in(run.version.document)])
