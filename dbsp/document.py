"""The circuit document: the JSON shared by the engine, the REST API and the editor.

    {"format": "dbspweb.circuit", "version": 1,
     "nodes": [{"id": "orders", "kind": "input", "params": {...}, "position": {"x": 0, "y": 0}}],
     "edges": [{"from": {"node": "orders", "port": "out"}, "to": {"node": "big", "port": "in"}}]}

A `fixedpoint` node carries a nested circuit in `subcircuit` ({nodes, edges}); node ids
are unique across the whole document, and an edge joins nodes of the same circuit. An
edge out of a fixed point names the export node inside as its port.

`load_document` checks the structure only (shapes, ids, references); `validate` checks
the meaning (operators, parameters, schemas, cycles).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import CircuitInvalid, Problem
from .limits import document_problems

FORMAT = "dbspweb.circuit"
VERSION = 1
NODE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


@dataclass(frozen=True)
class PortRef:
    node: str
    port: str


@dataclass(frozen=True)
class Edge:
    source: PortRef
    target: PortRef


@dataclass
class Node:
    id: str
    kind: str
    params: dict = field(default_factory=dict)
    position: dict = field(default_factory=dict)
    subcircuit: "CircuitDocument | None" = None
    label: str | None = None


@dataclass
class CircuitDocument:
    nodes: dict[str, Node]
    edges: list[Edge]

    def _edges_by(self, end: str) -> dict[str, list[Edge]]:
        """Edges by the node at one end ("source" or "target"), indexed once (rebuilt if
        edges were added), so a node's edges are found without a scan of all edges."""
        cache = self.__dict__.setdefault("_index", {})
        if cache.get("count") != len(self.edges):
            cache.clear()
            cache["count"] = len(self.edges)
        if end not in cache:
            index: dict[str, list[Edge]] = {}
            for e in self.edges:
                index.setdefault(getattr(e, end).node, []).append(e)
            cache[end] = index
        return cache[end]

    def inputs_of(self, node_id: str) -> dict[str, PortRef]:
        """target port name -> the source port feeding it."""
        return {e.target.port: e.source for e in self._edges_by("target").get(node_id, [])}

    def consumers_of(self, node_id: str) -> list[Edge]:
        return list(self._edges_by("source").get(node_id, []))

    def key_of(self, ref: PortRef) -> str:
        """Where the value leaving `ref` is kept: the node's id, or for a fixed point
        (several outputs) the id of the export node the port names."""
        node = self.nodes.get(ref.node)
        return ref.port if node is not None and node.subcircuit is not None else ref.node

    def sources_of(self, node_id: str) -> dict[str, str]:
        """input port -> the key of the value feeding it (see key_of)."""
        return {port: self.key_of(ref) for port, ref in self.inputs_of(node_id).items()}

    def to_json(self, header: bool = True) -> dict:
        nodes = []
        for n in self.nodes.values():
            item = {"id": n.id, "kind": n.kind, "params": n.params, "position": n.position}
            if n.label is not None:
                item["label"] = n.label
            if n.subcircuit is not None:
                item["subcircuit"] = n.subcircuit.to_json(header=False)
            nodes.append(item)
        body = {
            "nodes": nodes,
            "edges": [
                {"from": {"node": e.source.node, "port": e.source.port}, "to": {"node": e.target.node, "port": e.target.port}}
                for e in self.edges
            ],
        }
        return {"format": FORMAT, "version": VERSION} | body if header else body


def _port_ref(value, where: str, problems: list[Problem]) -> PortRef | None:
    if not isinstance(value, dict) or not isinstance(value.get("node"), str) or not isinstance(value.get("port"), str):
        problems.append(Problem(f"{where} must be an object {{\"node\": id, \"port\": name}}"))
        return None
    return PortRef(value["node"], value["port"])


def load_document(data) -> CircuitDocument:
    """Parse the document's structure; raise CircuitInvalid listing every structural problem."""
    problems: list[Problem] = []
    if not isinstance(data, dict):
        raise CircuitInvalid([Problem("a circuit document must be a JSON object")])
    if too_big := document_problems(data):  # before anything walks it recursively
        raise CircuitInvalid(too_big)
    if data.get("format", FORMAT) != FORMAT:
        problems.append(Problem(f"format must be {FORMAT!r}, got {data.get('format')!r}"))
    if data.get("version", VERSION) != VERSION:
        problems.append(Problem(f"unsupported document version {data.get('version')!r} (this engine reads version {VERSION})"))
    doc = _load_circuit(data, "", problems, set())
    if problems:
        raise CircuitInvalid(problems)
    return doc


def _load_circuit(data: dict, where: str, problems: list[Problem], seen: set[str]) -> CircuitDocument:
    """One circuit level (the document, or a fixed point's subcircuit at `where`)."""
    raw_nodes = data.get("nodes")
    raw_edges = data.get("edges", [])
    if not isinstance(raw_nodes, list):
        problems.append(Problem(f"{where}nodes must be a list"))
        raw_nodes = []
    if not isinstance(raw_edges, list):
        problems.append(Problem(f"{where}edges must be a list"))
        raw_edges = []
    nodes: dict[str, Node] = {}
    for i, raw in enumerate(raw_nodes):
        if not isinstance(raw, dict):
            problems.append(Problem(f"{where}nodes[{i}] must be an object"))
            continue
        node_id, kind = raw.get("id"), raw.get("kind")
        if not isinstance(node_id, str) or not NODE_ID.match(node_id):
            problems.append(Problem(f"{where}nodes[{i}]: id {node_id!r} must be a name of letters, digits and _ (not starting with a digit)"))
            continue
        if node_id in seen:
            problems.append(Problem(f"duplicate node id {node_id!r} (ids are unique across the document, subcircuits included)", node=node_id))
            continue
        seen.add(node_id)
        if not isinstance(kind, str):
            problems.append(Problem(f"node {node_id!r}: kind must be a string", node=node_id))
            continue
        params = raw.get("params", {})
        if not isinstance(params, dict):
            problems.append(Problem(f"node {node_id!r}: params must be an object", node=node_id))
            params = {}
        position = raw.get("position", {})
        label = raw.get("label") if isinstance(raw.get("label"), str) else None
        sub = raw.get("subcircuit")
        subcircuit = None
        if sub is not None or kind == "fixedpoint":
            if not isinstance(sub, dict):
                problems.append(Problem(f"node {node_id!r}: subcircuit must be an object {{\"nodes\": [...], \"edges\": [...]}}", node=node_id, param="subcircuit"))
                sub = {"nodes": []}
            subcircuit = _load_circuit(sub, f"node {node_id!r}: subcircuit ", problems, seen)
        nodes[node_id] = Node(node_id, kind, params, position if isinstance(position, dict) else {}, subcircuit, label)
    edges: list[Edge] = []
    for i, raw in enumerate(raw_edges):
        if not isinstance(raw, dict):
            problems.append(Problem(f"{where}edges[{i}] must be an object"))
            continue
        src = _port_ref(raw.get("from"), f"{where}edges[{i}].from", problems)
        dst = _port_ref(raw.get("to"), f"{where}edges[{i}].to", problems)
        if src is None or dst is None:
            continue
        for ref, end in ((src, "from"), (dst, "to")):
            if ref.node not in nodes:
                inside = "" if ref.node not in seen else " (an edge joins nodes of the same circuit level; a fixed point is wired through its ports)"
                problems.append(Problem(f"{where}edges[{i}].{end} names unknown node {ref.node!r}{inside}", node=ref.node, port=ref.port))
        edges.append(Edge(src, dst))
    return CircuitDocument(nodes, edges)
