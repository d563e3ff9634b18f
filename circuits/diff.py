"""The difference between two circuit documents: nodes added, removed and changed (with
each changed field as a dotted path, e.g. `params.predicate`), edges added and removed,
and the document's own fields changed (e.g. `metadata.source.text`, the SQL / Datalog
text of a compiled circuit).

Nodes are matched by id, edges by (from node, from port, to node, to port).

`changed_items` lists a diff as items, one per thing a person changes: a node added or
removed, one field of a node, a wire added or removed, one field of the document. Who
changed what (circuits/authorship.py) is recorded and shown in these items."""
from __future__ import annotations

import json

_MISSING = object()


def _flatten(value, prefix: str, out: dict) -> dict:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    else:
        out[prefix] = value
    return out


def _nodes(document) -> dict[str, dict]:
    nodes = document.get("nodes") if isinstance(document, dict) else None
    return {str(n.get("id")): n for n in nodes or [] if isinstance(n, dict)}


def _edge_key(edge) -> tuple:
    src, dst = edge.get("from") or {}, edge.get("to") or {}
    return (src.get("node"), src.get("port"), dst.get("node"), dst.get("port"))


def _edges(document) -> dict[tuple, dict]:
    edges = document.get("edges") if isinstance(document, dict) else None
    return {_edge_key(e): e for e in edges or [] if isinstance(e, dict)}


def node_changes(before: dict, after: dict) -> dict[str, dict]:
    """Dotted field path -> {"from": old, "to": new} for every field that differs."""
    old, new = _flatten(before, "", {}), _flatten(after, "", {})
    changes = {}
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path, _MISSING), new.get(path, _MISSING)
        if a != b:
            changes[path] = {"from": None if a is _MISSING else a, "to": None if b is _MISSING else b}
    return changes


def _document_fields(document) -> dict:
    if not isinstance(document, dict):
        return {}
    return {k: v for k, v in document.items() if k not in ("nodes", "edges")}


def diff_documents(a, b) -> dict:
    nodes_a, nodes_b = _nodes(a), _nodes(b)
    edges_a, edges_b = _edges(a), _edges(b)
    changed = []
    for node_id in nodes_a.keys() & nodes_b.keys():
        if nodes_a[node_id] == nodes_b[node_id]:
            continue  # (most nodes, in a diff of one edit: no need to flatten them)
        changes = node_changes(nodes_a[node_id], nodes_b[node_id])
        if changes:
            changed.append({"id": node_id, "fields": list(changes), "changes": changes})
    return {
        "nodes": {
            "added": [nodes_b[i] for i in nodes_b if i not in nodes_a],
            "removed": [nodes_a[i] for i in nodes_a if i not in nodes_b],
            "changed": sorted(changed, key=lambda c: c["id"]),
        },
        "edges": {
            "added": [edges_b[k] for k in edges_b if k not in edges_a],
            "removed": [edges_a[k] for k in edges_a if k not in edges_b],
        },
        "document": node_changes(_document_fields(a), _document_fields(b)),
    }


NODE_ADDED, NODE_REMOVED, NODE_CHANGED = "node_added", "node_removed", "node_changed"
EDGE_ADDED, EDGE_REMOVED, DOCUMENT_CHANGED = "edge_added", "edge_removed", "document_changed"
CHANGES = (NODE_ADDED, NODE_REMOVED, NODE_CHANGED, EDGE_ADDED, EDGE_REMOVED, DOCUMENT_CHANGED)
#: the same item seen from the other version (a diff from b to a)
REVERSED = {NODE_ADDED: NODE_REMOVED, NODE_REMOVED: NODE_ADDED, EDGE_ADDED: EDGE_REMOVED, EDGE_REMOVED: EDGE_ADDED}


def edge_name(edge) -> str:
    """`from.port->to.port`, as the shared document keys its wires."""
    src, dst = edge.get("from") or {}, edge.get("to") or {}
    return f"{src.get('node')}.{src.get('port')}->{dst.get('node')}.{dst.get('port')}"


def changed_items(diff: dict) -> list[dict]:
    """The diff as items: {"change", and "node" / "field" / "edge" as they apply}, in the
    order the diff lists them."""
    items: list[dict] = []
    items += [{"change": NODE_ADDED, "node": str(n.get("id"))} for n in diff["nodes"]["added"]]
    items += [{"change": NODE_REMOVED, "node": str(n.get("id"))} for n in diff["nodes"]["removed"]]
    items += [{"change": NODE_CHANGED, "node": c["id"], "field": f} for c in diff["nodes"]["changed"] for f in c["fields"]]
    items += [{"change": EDGE_ADDED, "edge": edge_name(e)} for e in diff["edges"]["added"]]
    items += [{"change": EDGE_REMOVED, "edge": edge_name(e)} for e in diff["edges"]["removed"]]
    items += [{"change": DOCUMENT_CHANGED, "field": f} for f in diff.get("document", {})]
    return items


def item_key(item: dict) -> str:
    """One string per item (what the authorship ledger keys on)."""
    return json.dumps([item["change"], item.get("node"), item.get("field"), item.get("edge")], ensure_ascii=False)
