"""Validation: every problem of a circuit document at once, each naming where it is.

Checks, in order: structure (document.load_document), operator kinds, ports and edges,
cycles without a delay (naming the nodes on the cycle), then parameters and schemas
inferred along every edge in topological order. A node whose inputs are broken is not
checked further, so one mistake is reported once, where it is.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .document import CircuitDocument, load_document
from .errors import CircuitInvalid, Problem
from .operators import OPERATORS, Operator
from .operators.fixedpoint import BOUNDARY_IN, boundary_problem
from .types import Schema


@dataclass
class Validated:
    document: CircuitDocument
    operators: dict[str, Operator]
    order: list[str]  # topological order of node ids
    schemas: dict[str, Schema] = field(default_factory=dict)  # node id -> output schema
    problems: list[Problem] = field(default_factory=list)


def _find_cycle(doc: CircuitDocument, delays: set[str]) -> list[str] | None:
    """A cycle that passes through no delay node, as the list of its nodes, or None."""
    succ: dict[str, list[str]] = {n: [] for n in doc.nodes}
    for e in doc.edges:
        if e.source.node in succ and e.target.node in succ and e.source.node not in delays:
            succ[e.source.node].append(e.target.node)
    color = dict.fromkeys(doc.nodes, 0)
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        color[n] = 1
        stack.append(n)
        for m in succ[n]:
            if color[m] == 1:
                return stack[stack.index(m):]
            if color[m] == 0 and (found := visit(m)):
                return found
        stack.pop()
        color[n] = 2
        return None

    for n in doc.nodes:
        if color[n] == 0 and (found := visit(n)):
            return found
    return None


def _topological(doc: CircuitDocument, delays: set[str]) -> list[str]:
    """Kahn's order over the edges, leaving out edges into z^-1 (they close cycles)."""
    edges = [e for e in doc.edges if e.target.node not in delays]
    indeg = dict.fromkeys(doc.nodes, 0)
    for e in edges:
        indeg[e.target.node] += 1
    ready = [n for n, d in indeg.items() if d == 0]
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for e in edges:
            if e.source.node == n:
                indeg[e.target.node] -= 1
                if indeg[e.target.node] == 0:
                    ready.append(e.target.node)
    return order


def check(data) -> Validated:
    """Validate a document (dict); the result carries every problem found (maybe none).
    `schemas` has every node's output schema, subcircuits' nodes included."""
    try:
        doc = data if isinstance(data, CircuitDocument) else load_document(data)
    except CircuitInvalid as e:
        return Validated(CircuitDocument({}, []), {}, [], problems=list(e.problems))
    return check_scope(doc)


def check_scope(doc: CircuitDocument, boundary: dict[str, Schema] | None = None) -> Validated:
    """Validate one circuit level: the document, or (with `boundary`: the schemas on a
    fixed point's input ports, by import/delta0 id) a fixed point's subcircuit."""
    inner = boundary is not None
    problems: list[Problem] = []
    operators: dict[str, Operator] = {}
    for node in doc.nodes.values():
        op_class = OPERATORS.get(node.kind)
        if op_class is None:
            problems.append(Problem(f"node {node.id!r}: unknown operator {node.kind!r} (known: {', '.join(sorted(OPERATORS))})", node=node.id))
            continue
        op = op_class(node.id, node.params, node.subcircuit) if node.kind == "fixedpoint" else op_class(node.id, node.params)
        if inner and node.kind in BOUNDARY_IN:
            op.boundary_schema = boundary.get(node.id)
        if inner and node.kind == "export":
            op.inside = True
        if (found := boundary_problem(op, inner)) is not None:
            problems.append(found)
            continue
        operators[node.id] = op

    broken: set[str] = {n for n in doc.nodes if n not in operators}
    for node_id, op in operators.items():
        wired: dict[str, int] = {}
        for e in doc.edges:
            if e.target.node == node_id:
                if e.target.port not in op.inputs:
                    problems.append(Problem(f"node {node_id!r} has no input port {e.target.port!r} (ports: {', '.join(op.inputs) or 'none'})", node=node_id, port=e.target.port))
                    broken.add(node_id)
                wired[e.target.port] = wired.get(e.target.port, 0) + 1
            if e.source.node == node_id and e.source.port not in op.outputs:
                problems.append(Problem(f"node {node_id!r} has no output port {e.source.port!r} (ports: {', '.join(op.outputs) or 'none'})", node=node_id, port=e.source.port))
                broken.add(node_id)
        for port in op.inputs:
            if wired.get(port, 0) == 0:
                problems.append(Problem(f"node {node_id!r}: input port {port!r} is not connected", node=node_id, port=port))
                broken.add(node_id)
            elif wired[port] > 1:
                problems.append(Problem(f"node {node_id!r}: input port {port!r} has {wired[port]} incoming edges (one allowed; use a union)", node=node_id, port=port))
                broken.add(node_id)

    delays = {n for n, op in operators.items() if getattr(op, "breaks_cycles", False)}
    cycle = _find_cycle(doc, delays)
    if cycle:
        path = " -> ".join(cycle + [cycle[0]])
        for n in cycle:
            problems.append(Problem(f"node {n!r} is on a cycle without a z^-1 delay: {path}", node=n))
        return Validated(doc, operators, [], problems=problems)

    order = _topological(doc, delays)
    schemas: dict[str, Schema] = {}
    # Infer schemas in order; a z^-1 takes its input's schema, which on a feedback loop
    # is only known after the nodes it feeds, so repeat until nothing changes.
    tentative: set[str] = set()
    progress = True
    while progress:
        progress = False
        for node_id in order:
            if node_id in broken or node_id in schemas:
                continue
            op = operators[node_id]
            sources = doc.inputs_of(node_id)
            keys = doc.sources_of(node_id)  # port -> where its value is (see key_of)
            if any(src.node in broken for src in sources.values()):
                broken.add(node_id)  # upstream already reported
                progress = True
                continue
            declared = op.params.get("schema") if op.breaks_cycles else None
            if declared is not None:
                try:
                    schemas[node_id] = Schema.from_list(declared)
                    progress = True
                    continue
                except (TypeError, KeyError, AttributeError):
                    problems.append(Problem(f"node {node_id!r}: parameter 'schema' must be a list of {{name, type}}", node=node_id, param="schema"))
                    broken.add(node_id)
                    continue
            if any(key not in schemas for key in keys.values()):
                continue  # waits for a z^-1 on a loop
            found = op.validate({port: schemas[key] for port, key in keys.items()})
            if found:
                problems.extend(found)
                broken.add(node_id)
            else:
                schemas[node_id] = op.output_schema
                if op.kind == "fixedpoint":
                    schemas.update(op.sub.schemas)  # its nodes', exports' included (its ports)
            progress = True
        if not progress:
            # Stuck on a loop: a union/difference with one known input takes that
            # input's schema for now (it must be the output's), and is checked in full below.
            for node_id in order:
                op = operators.get(node_id)
                if node_id in schemas or node_id in broken or op is None or op.kind not in ("union", "difference"):
                    continue
                known = [schemas[key] for key in doc.sources_of(node_id).values() if key in schemas]
                if known:
                    schemas[node_id] = known[0]
                    tentative.add(node_id)
                    progress = True
                    break
    for node_id in tentative:
        op, keys = operators[node_id], doc.sources_of(node_id)
        if all(key in schemas for key in keys.values()):
            found = op.validate({port: schemas[key] for port, key in keys.items()})
            problems.extend(found)
    for node_id in delays:
        op, src = operators[node_id], doc.sources_of(node_id).get("in")
        if node_id in schemas and src is not None and src in schemas and op.params.get("schema") is not None:
            if [(c.name, c.type) for c in schemas[src].columns] != [(c.name, c.type) for c in schemas[node_id].columns]:
                problems.append(Problem(f"node {node_id!r}: declared schema differs from its input's", node=node_id, param="schema"))
        if node_id in schemas:
            op.output_schema = schemas[node_id]
            op.input_schemas = {"in": schemas[node_id]}
    for node_id in order:
        if node_id not in broken and node_id not in schemas and node_id in delays:
            problems.append(Problem(
                f"node {node_id!r}: cannot infer the schema of this z^-1 on a feedback loop; give it a 'schema' parameter", node=node_id, param="schema"))
    if not inner and not any(op.kind == "output" for op in operators.values()) and not problems:
        problems.append(Problem("the circuit has no output view: add an 'output' node"))
    return Validated(doc, operators, order, schemas, problems)


def validate(data) -> list[Problem]:
    """Every problem in a circuit document (an empty list when it is valid)."""
    return check(data).problems
