"""The node ids of a circuit a thread may be pinned to: the top-level nodes of its shared
document as it is now (when one was opened) and of its latest saved version. Nodes inside a
fixed point's inner circuit are not on the canvas and take no thread."""
from __future__ import annotations

from pycrdt import Doc, Map

from ..models import Circuit, SharedDocument, SharedDocumentUpdate


def shared_node_ids(circuit: Circuit) -> set[str]:
    """The shared document's node ids, read as stored (never seeded here: reading it must not create it)."""
    shared = SharedDocument.objects.filter(circuit=circuit).first()
    if shared is None:
        return set()
    doc = Doc()
    doc.apply_update(bytes(shared.state))
    for update in SharedDocumentUpdate.objects.filter(document=shared).values_list("update", flat=True):
        doc.apply_update(bytes(update))
    return set(doc.get("nodes", type=Map).keys())


def version_node_ids(circuit: Circuit) -> set[str]:
    latest = circuit.latest_version
    nodes = (latest.document or {}).get("nodes", []) if latest else []
    return {n["id"] for n in nodes if isinstance(n, dict) and isinstance(n.get("id"), str)}


def node_ids(circuit: Circuit) -> set[str]:
    return shared_node_ids(circuit) | version_node_ids(circuit)
