"""Validation: every problem of a circuit document at once, each naming where it is.

Checks, in order: structure (document.load_document), operator kinds, ports and edges,
cycles without a delay (every strongly connected component without a z^-1, naming the
nodes on it), then parameters and schemas inferred along every edge in topological
order. A bad edge is reported where it is and does not stop its nodes' parameters being
checked while their input schemas are still known; only a node whose input schema is
unknown (an unconnected or ambiguous port, a broken or cyclic upstream) is not checked
further, so one mistake is reported once, where it is.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from . import budget
from .document import CircuitDocument, Edge, load_document
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


def _components(nodes: list[str], succ: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iteratively, no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(succ[root]))]
        while work:
            v, successors = work[-1]
            for w in successors:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    found.append(component)
    return found


def _cycle_through(start: str, succ: dict[str, list[str]], within: set[str]) -> list[str]:
    """A shortest cycle from `start` back to it, staying inside `within` (its component)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for n in frontier:
            for m in succ[n]:
                if m == start:
                    path = [n]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return path[::-1]
                if m in within and m not in came_from:
                    came_from[m] = n
                    following.append(m)
        frontier = following
    return [start]  # not reached for a component with a cycle


def _delay_free_cycles(nodes: list[str], edges: list[Edge], breaks: set[str]) -> list[tuple[list[str], dict[str, list[str]]]]:
    """Every strongly connected component whose cycles pass through no node of `breaks`
    (z^-1, or an unknown operator that might be one), with the successor map, in order."""
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for e in edges:
        if e.source.node not in breaks and e.target.node not in succ[e.source.node]:
            succ[e.source.node].append(e.target.node)
    position = {n: i for i, n in enumerate(nodes)}
    cyclic = []
    for component in _components(nodes, succ):
        if len(component) > 1 or component[0] in succ[component[0]]:
            cyclic.append((sorted(component, key=position.__getitem__), succ))
    return sorted(cyclic, key=lambda c: position[c[0][0]])


def _topological(nodes: list[str], edges: list[Edge]) -> list[str]:
    """Kahn's order over `edges` (acyclic: the caller leaves out the edges that close cycles)."""
    indeg = dict.fromkeys(nodes, 0)
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for e in edges:
        indeg[e.target.node] += 1
        succ[e.source.node].append(e.target.node)
    ready = deque(n for n, d in indeg.items() if d == 0)
    order = []
    while ready:
        n = ready.popleft()
        order.append(n)
        for m in succ[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
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
        budget.check(f"node {node.id!r}")
        op_class = OPERATORS.get(node.kind)
        if op_class is None:
            problems.append(Problem(f"node {node.id!r}: unknown operator {node.kind!r} (known: {', '.join(sorted(OPERATORS))})", node=node.id))
            continue
        op = op_class(node.id, node.params, node.subcircuit) if node.kind == "fixedpoint" else op_class(node.id, node.params)
        if node.kind == "fixedpoint":
            op.check_subcircuit = check_scope
        if inner and node.kind in BOUNDARY_IN:
            op.boundary_schema = boundary.get(node.id)
        if inner and node.kind == "export":
            op.inside = True
        if (found := boundary_problem(op, inner)) is not None:
            problems.append(found)
            continue
        operators[node.id] = op

    # broken: nodes whose output schema is unknown (their problem is reported already, or
    # upstream); nodes fed by them are not checked, so they get no spurious errors.
    broken: set[str] = {n for n in doc.nodes if n not in operators}
    blocked: set[str] = set()  # nodes with an input whose schema cannot be known
    feeds: dict[str, dict[str, list[Edge]]] = {n: {port: [] for port in op.inputs} for n, op in operators.items()}
    live: list[Edge] = []  # the edges that carry data (both ports exist, as far as known)
    for e in doc.edges:
        source, target = operators.get(e.source.node), operators.get(e.target.node)
        bad_source = source is not None and e.source.port not in source.outputs
        bad_target = target is not None and e.target.port not in target.inputs
        if bad_source:
            problems.append(Problem(f"node {e.source.node!r} has no output port {e.source.port!r} (ports: {', '.join(source.outputs) or 'none'})", node=e.source.node, port=e.source.port))
            if target is not None and not bad_target:
                blocked.add(e.target.node)  # this port is fed by nothing that exists
        if bad_target:
            problems.append(Problem(f"node {e.target.node!r} has no input port {e.target.port!r} (ports: {', '.join(target.inputs) or 'none'})", node=e.target.node, port=e.target.port))
        if target is not None and not bad_target:
            feeds[e.target.node][e.target.port].append(e)
        if not bad_source and not bad_target:
            live.append(e)
    for node_id, op in operators.items():
        for port, edges in feeds[node_id].items():
            if not edges:
                problems.append(Problem(f"node {node_id!r}: input port {port!r} is not connected", node=node_id, port=port))
                blocked.add(node_id)
            elif len(edges) > 1:
                problems.append(Problem(f"node {node_id!r}: input port {port!r} has {len(edges)} incoming edges (one allowed; use a union)", node=node_id, port=port))

    def keys_of(node_id: str) -> dict[str, list[str]]:
        """input port -> the keys of the values feeding it (see CircuitDocument.key_of)."""
        return {port: [doc.key_of(e.source) for e in edges] for port, edges in feeds[node_id].items()}

    def inputs_known(node_id: str) -> dict[str, Schema] | None:
        """port -> schema, when every port's feed is known (a port fed twice counts when
        both feeds agree); None when some feed's schema is missing or ambiguous."""
        known = {}
        for port, keys in keys_of(node_id).items():
            found = [schemas[k] for k in keys if k in schemas]
            if not keys or len(found) < len(keys):
                return None
            if any([(c.name, c.type) for c in f.columns] != [(c.name, c.type) for c in found[0].columns] for f in found[1:]):
                return None
            known[port] = found[0]
        return known

    delays = {n for n, op in operators.items() if getattr(op, "breaks_cycles", False)}
    ids = list(doc.nodes)
    unknown = {n for n in doc.nodes if n not in operators}  # might break cycles: not judged
    on_cycles: set[str] = set()
    for component, succ in _delay_free_cycles(ids, live, delays | unknown):
        within = set(component)
        for n in component:
            cycle = _cycle_through(n, succ, within)
            path = " -> ".join(cycle + [n])
            rest = [m for m in component if m not in cycle]
            also = f" (its loop also runs through {', '.join(rest)})" if rest else ""
            problems.append(Problem(f"node {n!r} is on a cycle without a z^-1 delay: {path}{also}", node=n))
        on_cycles |= within
    broken |= on_cycles

    # Leaving out edges into a z^-1 (or an unknown node) and out of a delay-free cycle
    # leaves no cycle, so every node is ordered.
    order = _topological(ids, [e for e in live if e.target.node not in delays | unknown and e.source.node not in on_cycles])
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
            budget.check(f"node {node_id!r}")
            op = operators[node_id]
            if node_id in blocked or any(e.source.node in broken for edges in feeds[node_id].values() for e in edges):
                broken.add(node_id)  # already reported, here or upstream
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
            if any(key not in schemas for keys in keys_of(node_id).values() for key in keys):
                continue  # waits for a z^-1 on a loop
            known = inputs_known(node_id)
            if known is None:
                broken.add(node_id)  # a port fed twice with different columns: reported above
                progress = True
                continue
            found = op.validate(known)
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
                known = [schemas[key] for keys in keys_of(node_id).values() for key in keys if key in schemas]
                if known:
                    schemas[node_id] = known[0]
                    tentative.add(node_id)
                    progress = True
                    break
    for node_id in tentative:
        known = inputs_known(node_id)
        if known is not None:
            problems.extend(operators[node_id].validate(known))
    for node_id in delays:
        op, src = operators[node_id], keys_of(node_id).get("in", [])
        if node_id in schemas and src and src[0] in schemas and op.params.get("schema") is not None:
            if [(c.name, c.type) for c in schemas[src[0]].columns] != [(c.name, c.type) for c in schemas[node_id].columns]:
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
