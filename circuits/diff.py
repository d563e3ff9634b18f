"""The difference between two circuit documents: nodes added, removed and changed (with
each changed field as a dotted path, e.g. `params.predicate`), edges added and removed.

Nodes are matched by id, edges by (from node, from port, to node, to port)."""
from __future__ import annotations

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


def diff_documents(a, b) -> dict:
    nodes_a, nodes_b = _nodes(a), _nodes(b)
    edges_a, edges_b = _edges(a), _edges(b)
    changed = []
    for node_id in nodes_a.keys() & nodes_b.keys():
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
    }
