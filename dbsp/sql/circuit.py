"""The circuit being built from SQL: nodes and edges at each level (the top level and
each fixed point's subcircuit), every node's output schema inferred by the engine
itself (a node is checked as soon as it is added, so a problem is reported at the SQL
construct that made it)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import budget
from ..errors import CircuitInvalid
from ..limits import MAX_NODES, too_many_nodes
from ..plan import compile_plan
from ..types import Schema
from .errors import Span, SqlError, SqlProblem, SqlTooBig


@dataclass(frozen=True)
class Ref:
    """An output port: `node`'s value (for a fixed point, `port` names its export)."""

    level: "Level"
    node: str
    port: str = "out"

    @property
    def key(self) -> str:
        return self.port if self.port != "out" else self.node


@dataclass(eq=False)
class Level:
    """One circuit level; a fixed point's subcircuit has the fixed point as `owner`."""

    parent: "Level | None" = None
    owner: str | None = None
    nodes: list[dict] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)
    imports: dict[tuple[str, str], str] = field(default_factory=dict)

    def json(self) -> dict:
        return {"nodes": self.nodes, "edges": self.edges}


class CircuitBuilder:
    def __init__(self):
        self.top = Level()
        self.ids: set[str] = set()
        self.reserved: set[str] = set()  # table and view names: never given to other nodes
        self.schemas: dict[str, Schema] = {}  # Ref.key -> schema
        self.following: dict[str, int] = {}  # base -> the last suffix tried (ids are found in constant time)
        self.nodes = 0  # nodes made, at every level

    def fresh(self, base: str) -> str:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base)[:56] or "node"
        if base[0].isdigit():
            base = "n_" + base
        name, i = base, self.following.get(base, 1)
        while name in self.ids or name in self.reserved:
            i += 1
            name = f"{base}_{i}"
        self.following[base] = i
        self.ids.add(name)
        return name

    def count(self, span: Span | None) -> None:
        """One more node: refused past MAX_NODES at the SQL that makes it; and the
        request's budget is kept."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise SqlTooBig([SqlProblem(too_many_nodes(), span)])
        budget.check(f"node {self.nodes}" + (f" (line {span})" if span else ""),
                     span.line if span else None, span.column if span else None)

    def reserve(self, name: str, span: Span | None) -> str:
        if name in self.ids:
            raise SqlError([SqlProblem(f"{name!r} is already defined", span)])
        self.ids.add(name)
        return name

    def schema(self, ref: Ref) -> Schema:
        return self.schemas[ref.key]

    def bring(self, ref: Ref, level: Level, span: Span | None = None) -> Ref:
        """`ref` as seen from `level`: through import nodes when it is outside (an import
        carries the span of the first SQL that used it)."""
        if ref.level is level:
            return ref
        if level.parent is None:
            raise AssertionError("a value inside a fixed point used outside it")
        outer = self.bring(ref, level.parent, span)
        key = (outer.node, outer.port)
        if key not in level.imports:
            node_id = self.fresh(f"{outer.node}_in")
            self.count(span)
            node = {"id": node_id, "kind": "import", "params": {}, "position": {}}
            if span is not None:
                node["source"] = span.as_dict()
            level.nodes.append(node)
            level.parent.edges.append({"from": {"node": outer.node, "port": outer.port}, "to": {"node": level.owner, "port": node_id}})
            level.imports[key] = node_id
            self.schemas[node_id] = self.schema(outer)
        return Ref(level, level.imports[key])

    def add(self, level: Level, base: str, kind: str, params: dict, inputs: dict[str, Ref], span: Span | None,
            construct: str, node_id: str | None = None) -> Ref:
        """Add a node fed by `inputs` (port -> value) and infer its output schema."""
        self.count(span)
        node_id = node_id or self.fresh(base)
        inputs = {port: self.bring(ref, level, span) for port, ref in inputs.items()}
        node = {"id": node_id, "kind": kind, "params": params, "position": {}}
        if span is not None:
            node["source"] = span.as_dict()
        if kind == "import":
            raise AssertionError("imports are made by bring()")
        if kind == "delay":
            self.schemas[node_id] = Schema.from_list(params["schema"])
        elif kind in ("export", "output"):
            self.schemas[node_id] = self.schema(inputs["in"])
        else:
            self.schemas[node_id] = self.infer(node, inputs, span, construct)
        level.nodes.append(node)
        for port, ref in inputs.items():
            level.edges.append({"from": {"node": ref.node, "port": ref.port}, "to": {"node": node_id, "port": port}})
        return Ref(level, node_id)

    def add_fixedpoint(self, level: Level, node_id: str, sub: Level, exports: list[str], span: Span | None, construct: str) -> dict[str, Ref]:
        self.count(span)
        node = {"id": node_id, "kind": "fixedpoint", "params": {"max_iterations": 1000}, "position": {}, "subcircuit": sub.json()}
        if span is not None:
            node["source"] = span.as_dict()
        inputs = {}
        for (src_node, src_port), import_id in sub.imports.items():
            inputs[import_id] = Ref(level, src_node, src_port)
        mini = self._mini(node, inputs, outputs=exports)
        try:
            plan = compile_plan(mini)
        except CircuitInvalid as e:
            raise SqlError([SqlProblem(f"{construct}: {p.message}", span) for p in e.problems]) from None
        for x in exports:
            self.schemas[x] = plan.schemas[f"__out_{x}"]
        level.nodes.append(node)
        return {x: Ref(level, node_id, x) for x in exports}

    def _mini(self, node: dict, inputs: dict[str, Ref], outputs: list[str] | None = None) -> dict:
        """A document holding just `node`, fed by inputs of the known schemas."""
        nodes, edges = [], []
        for port, ref in inputs.items():
            nodes.append({"id": f"__in_{port}", "kind": "input", "params": {"schema": self.schema(ref).as_list()}})
            edges.append({"from": {"node": f"__in_{port}", "port": "out"}, "to": {"node": node["id"], "port": port}})
        nodes.append({k: v for k, v in node.items() if k != "source"})
        for port in outputs or ["out"]:
            nodes.append({"id": f"__out_{port}", "kind": "output"})
            edges.append({"from": {"node": node["id"], "port": port}, "to": {"node": f"__out_{port}", "port": "in"}})
        return {"nodes": nodes, "edges": edges}

    def infer(self, node: dict, inputs: dict[str, Ref], span: Span | None, construct: str) -> Schema:
        try:
            plan = compile_plan(self._mini(node, inputs))
        except CircuitInvalid as e:
            raise SqlError([SqlProblem(f"{construct}: {p.message}", span) for p in e.problems]) from None
        return plan.schemas[node["id"]]

    def document(self) -> dict:
        layout(self.top)
        return {"format": "dbspweb.circuit", "version": 1} | self.top.json()


def layout(level: Level) -> None:
    """Columns by depth from the inputs, rows in order of creation (the editor may lay
    the circuit out again)."""
    depth: dict[str, int] = {}
    preds: dict[str, list[str]] = {n["id"]: [] for n in level.nodes}
    for e in level.edges:
        if e["to"]["node"] in preds:
            preds[e["to"]["node"]].append(e["from"]["node"])
    kinds = {n["id"]: n["kind"] for n in level.nodes}

    def d(root):
        """Longest path from a source, by an iterative depth-first walk (a chain of
        thousands of views is fine); a delay, or a node on the path (a cycle), counts 0."""
        if root in depth or kinds.get(root) == "delay":
            return depth.get(root, 0)
        on_path, work = {root}, [(root, iter(preds.get(root, [])))]
        while work:
            n, rest = work[-1]
            p = next((p for p in rest if p not in depth and p not in on_path and kinds.get(p) != "delay"), None)
            if p is not None:
                on_path.add(p)
                work.append((p, iter(preds.get(p, []))))
                continue
            depth[n] = 1 + max((depth.get(p, 0) for p in preds.get(n, [])), default=-1)
            on_path.discard(n)
            work.pop()
        return depth[root]

    rows: dict[int, int] = {}
    for node in level.nodes:
        col = d(node["id"])
        row = rows.get(col, 0)
        rows[col] = row + 1
        node["position"] = {"x": 240 * col, "y": 120 * row}
        if "subcircuit" in node:
            sub = Level(nodes=node["subcircuit"]["nodes"], edges=node["subcircuit"]["edges"])
            layout(sub)
