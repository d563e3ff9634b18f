"""The shared document's layout, which the editor's adapter (frontend/src/collab/circuitDoc.ts)
reads and writes too:

- `nodes`: Y.Map id -> Y.Map of the node's fields: `kind`, `label`, `position` ({x, y}),
  `params` (a Y.Map: each parameter merges on its own), `subcircuit` (a fixed point's
  inner circuit, one value), `order` (where the node stands in the document's list), and
  any other field of the node as one value.
- `edges`: Y.Map key -> {"edge": edge, "order": n}, key `from.node.from.port->to.node.to.port`.
- `source`: Y.Text, the SQL / Datalog text (`metadata.source.text`) of a circuit that has one.
- `meta`: Y.Map: `title`, `format`, `version`, `source_language`, and `rest` (the
  document's other top-level fields as one value).
"""
from __future__ import annotations

from typing import Any

from pycrdt import Doc, Map, Text

FORMAT = "dbspweb.circuit"


def edge_key(edge: dict) -> str:
    return f"{edge['from']['node']}.{edge['from']['port']}->{edge['to']['node']}.{edge['to']['port']}"


def _node_map(node: dict, order: int) -> Map:
    fields: dict[str, Any] = {"order": order}
    for field, value in node.items():
        if field == "id":
            continue
        fields[field] = Map(dict(value)) if field == "params" and isinstance(value, dict) else value
    return Map(fields)


def seed(document: dict | None, title: str) -> Doc:
    """A new shared document holding `document` (a circuit document, or None for an empty one)."""
    document = document or {"format": FORMAT, "version": 1, "nodes": [], "edges": []}
    doc = Doc()
    source = (document.get("metadata") or {}).get("source") or {}
    rest = {k: v for k, v in document.items() if k not in ("format", "version", "nodes", "edges")}
    if source:
        rest["metadata"] = {k: v for k, v in rest["metadata"].items() if k != "source"}
        if not rest["metadata"]:
            del rest["metadata"]
    meta = {"title": title, "format": document.get("format", FORMAT), "version": document.get("version", 1), "rest": rest}
    if source:
        meta["source_language"] = source.get("language", "sql")
    doc["meta"] = Map(meta)
    doc["nodes"] = Map({node["id"]: _node_map(node, i) for i, node in enumerate(document.get("nodes", []))})
    doc["edges"] = Map({edge_key(e): {"edge": e, "order": i} for i, e in enumerate(document.get("edges", []))})
    doc["source"] = Text(source.get("text", "") if source else "")
    return doc


def _plain(value: Any) -> Any:
    if isinstance(value, Map):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Text):
        return str(value)
    return value


def to_document(doc: Doc) -> tuple[dict, str]:
    """The circuit document and title a shared document holds (the adapter's `toDocument`)."""
    meta = _plain(doc.get("meta", type=Map))
    nodes_map = doc.get("nodes", type=Map)
    nodes = []
    for node_id, fields in nodes_map.items():
        node = {"id": node_id, **_plain(fields)}
        nodes.append(node)
    nodes.sort(key=lambda n: (n.get("order", 0), n["id"]))
    for node in nodes:
        node.pop("order", None)
    # A wire to a node deleted at the moment someone drew it goes with the node (as frontend/src/collab/circuitDoc.ts).
    present = {n["id"] for n in nodes}
    edges = sorted((e for e in doc.get("edges", type=Map).values()
                    if e["edge"]["from"]["node"] in present and e["edge"]["to"]["node"] in present),
                   key=lambda e: (e["order"], edge_key(e["edge"])))
    document = {"format": meta.get("format", FORMAT), "version": meta.get("version", 1), "nodes": nodes,
                "edges": [e["edge"] for e in edges], **(meta.get("rest") or {})}
    if meta.get("source_language"):
        metadata = dict(document.get("metadata") or {})
        metadata["source"] = {"language": meta["source_language"], "text": str(doc.get("source", type=Text))}
        document["metadata"] = metadata
    return document, meta.get("title", "")
