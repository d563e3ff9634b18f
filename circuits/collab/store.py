"""The shared document in the database: a compacted state plus the updates appended since.

Writers' updates are appended (an INSERT each, nothing read first), so two servers
writing at once lose nothing. When COMPACT_EVERY updates have gathered (and when a socket closes) the document folds them into
its state, in a transaction that holds the document's row: Yjs updates commute and merge
idempotently, so the state after compaction is the same document, smaller.
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from pycrdt import Doc

from .. import authorship
from ..models import Circuit, SharedDocument, SharedDocumentUpdate
from .layout import seed

COMPACT_EVERY = 200


def _seeded(circuit: Circuit) -> SharedDocument:
    """The circuit's shared document, created from its latest version on first opening.
    Two servers opening it at once: one row wins (one-to-one), the other reads it, so the
    text is never seeded twice."""
    found = SharedDocument.objects.filter(circuit=circuit).first()
    if found is not None:
        return found
    latest = circuit.latest_version
    state = seed(latest.document if latest else None, circuit.name).get_update()
    try:
        with transaction.atomic():
            return SharedDocument.objects.create(circuit=circuit, state=state, seeded_from=latest.number if latest else None)
    except IntegrityError:
        return SharedDocument.objects.get(circuit=circuit)


def load(circuit: Circuit) -> tuple[Doc, int]:
    """The circuit's shared document as stored (seeded when new), and its row's id."""
    shared = _seeded(circuit)
    doc = Doc()
    doc.apply_update(bytes(shared.state))
    for update in SharedDocumentUpdate.objects.filter(document=shared).values_list("update", flat=True):
        doc.apply_update(bytes(update))
    return doc, shared.pk


def append(document_id: int, update: bytes, author: tuple[int, dict, dict] | None = None) -> None:
    """Keep one writer's update, and with it who sent it and what it changed (`author`:
    the user's id and the circuit documents before and after it, for the authorship
    ledger, which compaction leaves alone); compact when enough have gathered."""
    with transaction.atomic():
        SharedDocumentUpdate.objects.create(document_id=document_id, update=update)
        if author is not None:
            authorship.record(document_id, *author)
    if SharedDocumentUpdate.objects.filter(document_id=document_id).count() >= COMPACT_EVERY:
        compact(document_id)


def compact(document_id: int) -> None:
    """Fold the appended updates into the state (the same document, one row)."""
    with transaction.atomic():
        shared = SharedDocument.objects.select_for_update().get(pk=document_id)
        updates = list(SharedDocumentUpdate.objects.filter(document=shared).values_list("pk", "update"))
        if not updates:
            return
        doc = Doc()
        doc.apply_update(bytes(shared.state))
        for _, update in updates:
            doc.apply_update(bytes(update))
        last = max(pk for pk, _ in updates)
        shared.state = doc.get_update()
        shared.compacted_upto = last
        shared.save(update_fields=["state", "compacted_upto", "updated_at"])
        SharedDocumentUpdate.objects.filter(document=shared, pk__lte=last).delete()
